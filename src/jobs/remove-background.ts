/**
 * @module
 * `remove_background` (SPEC.md §4 removals): one image and its options in, one PNG (cutout or
 * mask) out; holds a credit. Anonymous previews carry a pixel budget.
 */
import { jsonPart } from '../contract/signing'
import type { RemovalOptions, RemoveRequest } from '../contract/options'
import { type JobKind, type StoredSource, sourcePart } from './kind'

export interface RemoveBackgroundInput {
  source: StoredSource
  options: RemovalOptions
  /** Caps the result's pixels (anonymous previews, SPEC.md §5.4). */
  maxPixels?: number
}

export const removeBackground: JobKind<RemoveBackgroundInput> = {
  route: '/v1/remove',
  holdsCredit: true,
  async parts(env, { input }) {
    const options: RemoveRequest = { ...input.options, ...(input.maxPixels ? { maxPixels: input.maxPixels } : {}) }
    return [await jsonPart('options', options), await sourcePart(env, 'image', input.source)]
  },
  outputKey: ({ jobId }) => `results/${jobId}.png`,
}
