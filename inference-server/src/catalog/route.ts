/**
 * `POST /v1/catalog` (docs/inference-protocol.md, docs/catalog.md): parts `options`
 * (`CatalogRequestSchema`, the shared contract) and `reference-0` … `reference-{n-1}` (front,
 * back, side, detail). Answers a job stream: stages `segmenting` and `rendering` (the remote
 * backend: `rendering`), one output `result` (image/png, width×height) and `done` with warnings
 * and timings. Its body may carry four images at the upload limit (`BODY_LIMITS.references`).
 */
import { CatalogRequestSchema, referenceField, referencePart } from '../../../src/contract/catalog.js'
import { InferenceError } from '../errors.js'
import { parseOptions } from '../options.js'
import type { Routes } from '../http.js'
import { requirePart, streamJob } from '../stream.js'
import type { CatalogGenerator, CatalogReference } from './generator.js'
export type { CatalogGenerator }
import { checkReferences } from './references.js'

export const CATALOG_RESULT = 'result'

/** The references the options announce, in order; any other part is refused. */
function referencesOf(parts: Map<string, Uint8Array>, count: number): CatalogReference[] {
  const expected = new Set(['options', ...Array.from({ length: count }, (_, i) => referencePart(i))])
  for (const name of parts.keys()) {
    if (!expected.has(name)) {
      throw new InferenceError('invalid_input', `Unexpected part ${name}: options.references is ${count}`)
    }
  }
  return Array.from({ length: count }, (_, i) => ({
    name: referencePart(i),
    field: referenceField(i),
    bytes: requirePart(parts, referencePart(i)),
  }))
}

/** The routes that add `/v1/catalog` to the app, served by `generator`. */
export const catalogRoutes =
  (generator: CatalogGenerator): Routes =>
  (app, { signed, limiter, bodyLimit }) => {
    app.post('/v1/catalog', bodyLimit('references'), async (c) => {
      const { parts, segmenter } = await signed(c)
      const options = parseOptions(CatalogRequestSchema, parts.get('options'))
      const references = referencesOf(parts, options.references)
      return streamJob(c, limiter, generator.version(segmenter), async (out) => {
        await checkReferences(references)
        const result = await generator.generate(references, options, { segmenter, onStage: out.stage })
        out.output(
          { name: CATALOG_RESULT, contentType: 'image/png', width: result.width, height: result.height },
          result.png,
        )
        return { warnings: result.warnings, timings: result.timings }
      })
    })
  }
