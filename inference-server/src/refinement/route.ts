/**
 * @module
 * `POST /v1/refine` (docs/inference-protocol.md): parts `options` (RefineRequestSchema), `image`
 * (the source photo) and `mask` (the base revision's, 8-bit greyscale PNG at the source's size);
 * a job answer with stages `segmenting` and `refining` and one output, `mask`.
 */
import type { Hono } from 'hono'
import { MASK_OUTPUT, RefineRequestSchema } from '../../../src/contract/editing.js'
import type { RouteContext } from '../http.js'
import { parseOptions } from '../options.js'
import { requirePart, streamJob } from '../stream.js'
import { refineRevision } from './index.js'

export const REFINE_PATH = '/v1/refine'

/** Adds `POST /v1/refine` to `app`: a photo and its mask (the image-and-mask body limit). */
export function refineRoutes(app: Hono, { signed, limiter, bodyLimit }: RouteContext): void {
  app.post(REFINE_PATH, bodyLimit('twoImages'), async (c) => {
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
