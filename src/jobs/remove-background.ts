/**
 * @module
 * `remove_background` (SPEC.md §4 removals): one image and its options in, one PNG (cutout or
 * mask) out; holds a credit. Anonymous previews carry a pixel budget.
 */
import { jsonPart } from '../contract/signing'
import type { RemovalOptions, RemoveRequest } from '../contract/options'
import { type JobKind, type StoredObject, sourcePart } from './kind'

/** How heavy each level is against `balanced` (its call's deadline scales with it). */
const QUALITY_SCALE: Record<RemovalOptions['quality'], number> = { fast: 1, balanced: 1, high: 2 }

export interface RemoveBackgroundInput {
  source: StoredObject
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
  // `high` refines the edge and decontaminates colour after the model; `fast` runs it smaller.
  workScale: ({ options }) => QUALITY_SCALE[options.quality],
  level: ({ options }) => options.quality,
  outputKey: ({ jobId }) => `results/${jobId}.png`,
}
