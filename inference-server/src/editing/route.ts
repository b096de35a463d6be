/**
 * `POST /v1/revise` (docs/inference-protocol.md): parts `options` (`ReviseRequestSchema`) and
 * `mask` (the base); answers a job stream with stage `rendering`, one output `mask` and `done`.
 */
import type { Hono } from 'hono'
import { MASK_OUTPUT, ReviseRequestSchema } from '../../../src/contract/editing.js'
import { parseOptions } from '../options.js'
import type { RouteContext } from '../http.js'
import { requirePart, streamJob } from '../stream.js'
import { reviseMask } from './revise.js'
import { checkStrokeWork } from './strokes.js'

/** Adds `/v1/revise` to the app: a mask and options (the image-and-mask body limit). */
export function reviseRoutes(app: Hono, { signed, limiter, bodyLimit }: RouteContext): void {
  app.post('/v1/revise', bodyLimit('twoImages'), async (c) => {
    const { parts, segmenter } = await signed(c)
    const options = parseOptions(ReviseRequestSchema, parts.get('options'))
    checkStrokeWork(options)
    const base = requirePart(parts, 'mask')
    return streamJob(c, limiter, segmenter.version, async (out) => {
      const { png, width, height, timings } = await reviseMask(base, options, out.stage)
      out.output({ name: MASK_OUTPUT, contentType: 'image/png', width, height }, png)
      return { warnings: [], timings }
    })
  })
}
