/**
 * `POST /v1/try-on` (docs/inference-protocol.md, docs/try-on.md): parts `options`
 * (`TryOnRequestSchema`, the shared contract), `person` and `garment`, and no other. Answers a job
 * stream: stages `segmenting` and `rendering`, outputs `result` (image/png at the person photo's
 * size) and `landmarks` (application/json, `TryOnLandmarks`), then `done` with the warnings
 * (`experimental_non_commercial` always). Two images at the upload limit (`BODY_LIMITS.twoImages`).
 */
import { LANDMARKS_OUTPUT, TryOnRequestSchema } from '../../../src/contract/tryon.js'
import { InferenceError } from '../errors.js'
import { parseOptions } from '../options.js'
import type { Routes } from '../http.js'
import { requirePart, streamJob } from '../stream.js'
import type { TryOnModel } from './model.js'

export const TRYON_RESULT = 'result'
const PARTS = new Set(['options', 'person', 'garment'])

/** The routes that add `/v1/try-on` to the app, served by `model`. */
export const tryOnRoutes =
  (model: TryOnModel): Routes =>
  (app, { signed, limiter, bodyLimit }) => {
    app.post('/v1/try-on', bodyLimit('twoImages'), async (c) => {
      const { parts, segmenter } = await signed(c)
      const options = parseOptions(TryOnRequestSchema, parts.get('options'))
      for (const name of parts.keys()) {
        if (!PARTS.has(name))
          throw new InferenceError('invalid_input', `Unexpected part ${name}: expected options, person and garment`)
      }
      const input = { person: requirePart(parts, 'person'), garment: requirePart(parts, 'garment') }
      return streamJob(c, limiter, model.version(segmenter), async (out) => {
        const result = await model.tryOn(input, options, { segmenter, onStage: out.stage })
        out.output(
          { name: TRYON_RESULT, contentType: 'image/png', width: result.width, height: result.height },
          result.png,
        )
        out.output(
          { name: LANDMARKS_OUTPUT, contentType: 'application/json' },
          new TextEncoder().encode(JSON.stringify(result.landmarks)),
        )
        return { warnings: result.warnings, timings: result.timings }
      })
    })
  }
