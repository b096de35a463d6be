/**
 * @module
 * How sure a removal's mask is, 0..1, and the `low_confidence` warning below a threshold
 * (issue 31): a person should look at the result before using it. The measure is what the mask
 * itself shows, not a learnt score: the share of the subject's area that is neither clearly
 * foreground nor clearly background (a model that half sees leaves, ribbons or a second object
 * leaves a wide grey band), plus on `high` the share the other views disputed. Both are relative
 * to the subject's area, so a small subject with a soft edge is not mistaken for a sure one.
 * The threshold is chosen by bench/quality-gt.ts on ../shared/gt, cross-validated by group
 * (docs/quality.md "Confidence").
 */
import { LOW_CONFIDENCE_CODE, type Notice } from '../../../src/contract/frames.js'

/** Mask values strictly between these are unsure (of 0..255). */
export const UNSURE_LOW = 25
export const UNSURE_HIGH = 230

/** Below this, the removal carries the `low_confidence` warning. */
export const LOW_CONFIDENCE = 0.7

/** The unsure share that makes the confidence 0 (the measure's scale). */
const SCALE = 1

/**
 * The mask's unsure pixels and subject (≥ 128) pixels.
 * @example unsureShare(Uint8Array.of(255, 255, 128, 0)) // 1 / 3
 */
export function unsureShare(mask: Uint8Array): number {
  let subject = 0
  let unsure = 0
  for (const v of mask) {
    if (v >= 128) subject++
    if (v > UNSURE_LOW && v < UNSURE_HIGH) unsure++
  }
  return subject ? unsure / subject : Number.POSITIVE_INFINITY
}

/**
 * The confidence of a mask, 0..1 (rounded to 0.01): 1 − (unsure share + disputed share), clamped.
 * `disputed`: pixels `high`'s other views disputed (0 on other levels). An empty mask scores 0.
 * @example maskConfidence(Uint8Array.of(255, 255, 0, 0)) // 1
 */
export function maskConfidence(mask: Uint8Array, disputed = 0): number {
  let subject = 0
  for (const v of mask) if (v >= 128) subject++
  if (!subject) return 0
  const spread = unsureShare(mask) + disputed / subject
  return Math.round(100 * Math.max(0, Math.min(1, 1 - spread / SCALE))) / 100
}

/** The warning for a confidence below LOW_CONFIDENCE, or none. */
export function confidenceWarnings(confidence: number): Notice[] {
  if (confidence >= LOW_CONFIDENCE) return []
  return [
    {
      code: LOW_CONFIDENCE_CODE,
      message: `The mask is uncertain (confidence ${confidence.toFixed(2)}): check the result and correct it in the editor if needed`,
    },
  ]
}
