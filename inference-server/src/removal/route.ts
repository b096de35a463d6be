/**
 * `POST /v1/remove` (parts `options`, `RemoveRequestSchema`, and `image`: a job stream with one
 * output, `result`) and `POST /v1/inspect` (part `image`: its format and size as JSON), per
 * docs/inference-protocol.md. Each carries one image at the upload limit.
 */
import type { Hono } from 'hono'
import type { RouteContext } from '../http.js'
import { parseRemoveOptions } from '../options.js'
import { inspectImage, removeBackground } from '../remove.js'
import { requirePart, streamJob } from '../stream.js'

/** Adds `/v1/inspect` and `/v1/remove` to the app. */
export function removalRoutes(app: Hono, { signed, limiter, bodyLimit }: RouteContext): void {
  app.post('/v1/inspect', bodyLimit('image'), async (c) => {
    const { parts } = await signed(c)
    return c.json(await limiter.run(() => inspectImage(requirePart(parts, 'image')), c.req.raw.signal))
  })

  app.post('/v1/remove', bodyLimit('image'), async (c) => {
    const { parts, segmenter } = await signed(c)
    // Options are checked after the signature: an unsigned caller learns nothing about them.
    const options = parseRemoveOptions(parts.get('options'))
    const image = requirePart(parts, 'image')
    // With a model per level (segmentation/per-level.ts) the job reports its own level's model.
    return streamJob(c, limiter, (segmenter.forLevel?.(options.quality) ?? segmenter).version, async (out) => {
      const result = await removeBackground(segmenter, image, options, out.stage, out.signal)
      out.output({ name: 'result', contentType: 'image/png', width: result.width, height: result.height }, result.png)
      return { warnings: result.warnings, confidence: result.confidence, timings: { ...result.timings } }
    })
  })
}
