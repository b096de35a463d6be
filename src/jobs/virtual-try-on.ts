/**
 * @module
 * `virtual_try_on` (SPEC.md §4; DESIGN.md §3 Virtual try-on, experimental): a person photo and a
 * garment photo in, the person wearing the garment out (a PNG at the person photo's size); holds
 * a credit like a removal. The inference server's `landmarks` output is for its own diagnostics
 * and is not kept.
 */
import { jsonPart } from '../contract/signing'
import type { TryOnRequest } from '../contract/tryon'
import { type JobKind, type StoredObject, sourcePart } from './kind'

export interface VirtualTryOnInput {
  person: StoredObject
  garment: StoredObject
  /** The options with the seed always set (chosen at accept time when none was given). */
  options: TryOnRequest
}

export const virtualTryOn: JobKind<VirtualTryOnInput> = {
  route: '/v1/try-on',
  holdsCredit: true,
  async parts(env, { input }) {
    return [
      await jsonPart('options', input.options),
      await sourcePart(env, 'person', input.person),
      await sourcePart(env, 'garment', input.garment),
    ]
  },
  // Up to three model runs (DESIGN.md §4: a try-on at 1 MP in ≤ 3 model runs' time).
  workScale: () => 3,
  outputKey: ({ jobId }, output) => (output.name === 'result' ? `results/${jobId}.png` : null),
}
