/**
 * @module
 * How sure a removal's mask is, 0..1, and the `low_confidence` warning below a threshold
 * (issue 31): a person should look at the result before using it. The measure is what the mask
 * itself shows, not a learnt score: the share of the subject's area that is neither clearly
 * foreground nor clearly background (a model that half sees leaves, ribbons or a second object
 * leaves a wide grey band), plus per level what its own steps doubted: on `fast` the share its
 * finish moved (fast.ts: the stretch and the faint pass hide the model's grey band), on `high` the
 * share where its other view departs from `balanced`'s mask, or the share that view disputed. All
 * are relative to the subject's area, so a small subject with a soft edge is not mistaken for a
 * sure one. The measure and the threshold per level are chosen by bench/quality-gt.ts on
 * ../shared/gt (bench/lib/confidence-cv.ts), cross-validated by group (docs/quality.md "Confidence").
 */
import { LOW_CONFIDENCE_CODE, type Notice } from '../../../src/contract/frames.js'
import type { Quality } from '../options.js'
import { SUBJECT, UNSURE_BAND } from './bands.js'

/** What a level's steps doubted, in pixels (levels/index.ts LevelMask). */
export interface Doubts {
  /** `fast`: pixels its finish moved by more than 64 (fast.ts). */
  finished?: number
  /** `high`: pixels its other view disputed (arbitrate.ts: adds to the subject). */
  disputed?: number
  /** `high`: pixels where its other view departs from `balanced`'s mask, either way. */
  departed?: number
}

/** What counts as doubt besides the unsure band: one of Doubts, or nothing. */
export type DoubtMeasure = 'unsure' | `unsure+${keyof Doubts}`

export interface ConfidenceRule {
  measure: DoubtMeasure
  /** Below this, the removal carries the `low_confidence` warning. */
  threshold: number
}

/**
 * Per level, the in-sample choice of bench/quality-gt.ts (docs/quality.md "Confidence", with the
 * cross-validated precision and recall). `fast`'s was re-checked in session 20 (issue 44,
 * bench/confidence-gt.ts, highest recall at precision ≥ 0.5): the same choice, kept.
 */
export const CONFIDENCE_RULES: Record<Quality, ConfidenceRule> = {
  fast: { measure: 'unsure+finished', threshold: 0.8 },
  balanced: { measure: 'unsure', threshold: 0.7 },
  high: { measure: 'unsure+departed', threshold: 0.15 },
}

/** `balanced`'s threshold, the one level whose mask is the model's own. */
export const LOW_CONFIDENCE = CONFIDENCE_RULES.balanced.threshold

/** The unsure share that makes the confidence 0 (the measure's scale). */
const SCALE = 1

/**
 * The mask's unsure pixels (UNSURE_BAND) and subject (≥ SUBJECT) pixels.
 * @example unsureShare(Uint8Array.of(255, 255, 128, 0)) // 1 / 3
 */
export function unsureShare(mask: Uint8Array): number {
  const { subject, unsure } = countMask(mask)
  return subject ? unsure / subject : Number.POSITIVE_INFINITY
}

/** The subject and unsure pixels, in one indexed pass (12 MP: ~30 ms; for…of twice took ~0.3 s). */
function countMask(mask: Uint8Array): { subject: number; unsure: number } {
  let subject = 0
  let unsure = 0
  for (let i = 0; i < mask.length; i++) {
    const v = mask[i]
    if (v >= SUBJECT) subject++
    if (v > UNSURE_BAND.low && v < UNSURE_BAND.high) unsure++
  }
  return { subject, unsure }
}

/**
 * The confidence of a mask, 0..1 (rounded to 0.01): 1 − (unsure share + doubted share) / scale,
 * clamped. `doubted`: pixels the level's steps doubted (Doubts). An empty mask scores 0.
 * @example maskConfidence(Uint8Array.of(255, 255, 0, 0)) // 1
 */
export function maskConfidence(mask: Uint8Array, doubted = 0, scale = SCALE): number {
  const { subject, unsure } = countMask(mask)
  if (!subject) return 0
  const spread = unsure / subject + doubted / subject
  return Math.round(100 * Math.max(0, Math.min(1, 1 - spread / scale))) / 100
}

/**
 * A level's confidence by its rule's measure: a sum of two shares (each up to about 1) is on a
 * scale of 2, so the number a user sees stays spread over 0..1.
 * @example levelConfidence(Uint8Array.of(255, 255, 0, 0), { finished: 1 }, 'unsure+finished') // 0.75
 */
export function levelConfidence(mask: Uint8Array, doubts: Doubts, measure: DoubtMeasure): number {
  if (measure === 'unsure') return maskConfidence(mask)
  const key = measure.slice('unsure+'.length) as keyof Doubts
  return maskConfidence(mask, doubts[key] ?? 0, 2 * SCALE)
}

/**
 * What the `low_confidence` warning tells the user to do (issue 44 item 5), the one wording of it:
 * the API, MCP's removal result and the page all show the warning's message. The clicks are
 * refinements of a project made from the job (src/routes/projects.ts, project-edits.ts), each
 * click one refinement whose earlier clicks hold; the page's editor does the same (web/src/editor).
 */
export const LOW_CONFIDENCE_FIX =
  'check the result, and fix it with a few clicks: make a project from this job (POST /v1/projects with {"jobId"}), ' +
  'then send each click as a refinement with `points` (POST /v1/projects/{id}/refinements: every earlier click holds), ' +
  'or click on it in the editor (/editor?job=<job id>)'

/** The warning for a confidence below `threshold` (the level's), or none. */
export function confidenceWarnings(confidence: number, threshold = LOW_CONFIDENCE): Notice[] {
  if (confidence >= threshold) return []
  return [
    {
      code: LOW_CONFIDENCE_CODE,
      message: `The mask is uncertain (confidence ${confidence.toFixed(2)}): ${LOW_CONFIDENCE_FIX}`,
    },
  ]
}
