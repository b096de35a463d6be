/**
 * `POST /v1/export` (docs/inference-protocol.md): parts `options` (`ExportRequestSchema`), `image`
 * (the source photo) and `mask` (the revision's); answers a job stream with stage `rendering`,
 * one output `result` in the format's content type, and `done`.
 */
import type { Hono } from 'hono'
import { ExportRequestSchema, RESULT_OUTPUT } from '../../../src/contract/editing.js'
import { parseOptions } from '../options.js'
import type { RouteContext } from '../http.js'
import { requirePart, streamJob } from '../stream.js'
import { renderExport } from './export.js'

/** Adds `/v1/export` to the app. */
export function exportRoutes(app: Hono, { signed, limiter, bodyLimit }: RouteContext): void {
  app.post('/v1/export', bodyLimit('twoImages'), async (c) => {
    const { parts, segmenter } = await signed(c)
    const options = parseOptions(ExportRequestSchema, parts.get('options'))
    const image = requirePart(parts, 'image')
    const mask = requirePart(parts, 'mask')
    return streamJob(c, limiter, segmenter.version, async (out) => {
      const { bytes, contentType, width, height, timings } = await renderExport(image, mask, options, out.stage)
      out.output({ name: RESULT_OUTPUT, contentType, width, height }, bytes)
      return { warnings: [], timings }
    })
  })
}
