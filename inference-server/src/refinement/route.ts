/**
 * @module
 * `POST /v1/refine` (docs/inference-protocol.md): parts `options` (RefineRequestSchema), `image`
 * (the source photo) and `mask` (the base revision's, 8-bit greyscale PNG at the source's size);
 * a job answer with stages `segmenting` and `refining` and one output, `mask`. Registered by
 * `createApp` with the signed-request reader and the limiter it already has.
 */
import type { Context, Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { MASK_OUTPUT, RefineRequestSchema } from '../../../src/contract/editing.js'
import { MAX_IMAGE_BYTES } from '../../../src/contract/limits.js'
import { InferenceError } from '../errors.js'
import type { Limiter } from '../limiter.js'
import { parseOptions } from '../options.js'
import type { Segmenter } from '../segmentation/index.js'
import { requirePart, streamJob } from '../stream.js'
import { refineRevision } from './index.js'

/** A photo at the upload limit, its mask (a PNG no larger in practice), and the options. */
export const MAX_REFINE_BODY_BYTES = 2 * MAX_IMAGE_BYTES + 1024 * 1024

export const REFINE_PATH = '/v1/refine'

export interface RefineRouteDeps {
  /** Verifies the token and body and returns the parts and the loaded model (server.ts). */
  signed(c: Context): Promise<{ parts: Map<string, Uint8Array>; segmenter: Segmenter }>
  limiter: Limiter
  maxBodyBytes?: number
}

/**
 * Adds `POST /v1/refine` to `app`.
 * @example registerRefineRoute(app, { signed, limiter })
 */
export function registerRefineRoute(
  app: Hono,
  { signed, limiter, maxBodyBytes = MAX_REFINE_BODY_BYTES }: RefineRouteDeps,
): void {
  const limitBody = bodyLimit({
    maxSize: maxBodyBytes,
    onError: () => {
      throw new InferenceError('image_too_large', `Expected a body of at most ${maxBodyBytes} bytes`)
    },
  })
  app.post(REFINE_PATH, limitBody, async (c) => {
    const { parts, segmenter } = await signed(c)
    // Options are checked after the signature: an unsigned caller learns nothing about them.
    const options = parseOptions(RefineRequestSchema, parts.get('options'))
    const image = requirePart(parts, 'image')
    const mask = requirePart(parts, 'mask')
    return streamJob(c, limiter, segmenter.version, async (out) => {
      const result = await refineRevision(segmenter, image, mask, options, out.stage)
      out.output(
        { name: MASK_OUTPUT, contentType: 'image/png', width: result.width, height: result.height },
        result.png,
      )
      return { warnings: [], timings: { ...result.timings } }
    })
  })
}
