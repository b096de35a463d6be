/**
 * @module
 * `export` (internal; DESIGN.md §3 Exports): the project's source and a revision's mask rendered
 * with a recipe into png, webp, jpeg, zip or psd. Holds no credit; the result is kept 24 hours
 * like a job's; reports `image.export.completed.v1` to webhooks and the project's stream.
 */
import { type ExportFormat, type ExportRequest, largestCanvasPixels, type Recipe, type Size } from '../contract/editing'
import { jsonPart } from '../contract/signing'
import { describeExport } from '../services/exports'
import { type JobKind, type StoredObject, sourcePart } from './kind'

export interface ExportInput {
  projectId: string
  revisionId: string
  format: ExportFormat
  recipe: Recipe
  source: StoredObject
  mask: StoredObject
  /** The source's size, which with the recipe bounds what the render makes (absent on exports stored before it). */
  photo?: Size
}

export const exportKind: JobKind<ExportInput> = {
  route: '/v1/export',
  holdsCredit: false,
  async parts(env, { input }) {
    const options: ExportRequest = { format: input.format, recipe: input.recipe }
    return [
      await jsonPart('options', options),
      await sourcePart(env, 'image', input.source),
      await sourcePart(env, 'mask', input.mask),
    ]
  },
  outputPixels: ({ photo, recipe }) => (photo ? largestCanvasPixels(photo, recipe) : 0),
  outputKey: ({ jobId, input }) => `exports/${jobId}.${input.format}`,
  report: {
    event: 'image.export.completed.v1',
    describe: (env, job) => describeExport(env, job.jobId, job.input.projectId),
  },
}
