/**
 * How well the confidence (inference-server/src/levels/confidence.ts) flags the pairs a person
 * should look at (IoU < 0.8 against the truth), per level, its measure and threshold chosen
 * leave-one-group-out (issue 31). Each level has a few candidate measures (the unsure band alone,
 * or with what the level's own steps doubted: CONFIDENCE_CANDIDATES). For each group in turn, the
 * measure and threshold best by the level's objective (CONFIDENCE_OBJECTIVES: F1, or for `fast`
 * the highest recall at precision ≥ 0.5) on the other groups flag the left-out group (its
 * precision and recall per fold); precision and recall are then counted over all pairs, each
 * flagged by a choice made without its group (the lead, "nested" figure). Beside it: each measure alone with only its threshold chosen per fold,
 * and the in-sample choice (on all pairs), which the server ships (CONFIDENCE_RULES).
 */
import { CONFIDENCE_RULES, type DoubtMeasure } from '../../inference-server/src/levels/confidence.js'
import type { Quality } from '../../inference-server/src/options.js'
import type { PairRow } from './gt-report.js'
import { GROUPS } from './gt-score.js'
import { round } from './util.js'

const NEEDS_A_LOOK = 0.8
const THRESHOLDS = Array.from({ length: 19 }, (_, k) => round(0.05 * (k + 1), 2))

/** Per level, the measures it may use, simplest first (ties go to the earlier). */
export const CONFIDENCE_CANDIDATES: Record<Quality, DoubtMeasure[]> = {
  fast: ['unsure', 'unsure+finished'],
  balanced: ['unsure'],
  high: ['unsure', 'unsure+disputed', 'unsure+departed'],
}

type Counts = { tp: number; fp: number; fn: number }
type Choice = { measure: DoubtMeasure; threshold: number }

interface Item {
  name: string
  group: string
  /** Per measure: the confidence the server would report with it. */
  confidence: Partial<Record<DoubtMeasure, number>>
  bad: boolean
}

function counts(items: Item[], { measure, threshold }: Choice): Counts {
  const c = { tp: 0, fp: 0, fn: 0 }
  for (const it of items) {
    const flagged = (it.confidence[measure] ?? 1) < threshold
    if (flagged && it.bad) c.tp++
    else if (flagged) c.fp++
    else if (it.bad) c.fn++
  }
  return c
}
const f1 = ({ tp, fp, fn }: Counts) => (tp ? (2 * tp) / (2 * tp + fp + fn) : 0)

/**
 * How a level's measure and threshold are chosen on the training pairs, stated before measuring:
 * - `f1`: the best F1 (issue 31's rule).
 * - `recall@precision0.5`: the highest recall among the choices whose precision is at least 0.5
 *   (a warning right at least as often as it is wrong: below that, users learn to ignore it);
 *   ties: the higher precision. When no choice reaches 0.5 on the training pairs, the best F1.
 * Either way, remaining ties go to the earlier measure and the lower threshold (fewer warnings).
 */
export type ConfidenceObjective = 'f1' | 'recall@precision0.5'

/**
 * Per level, its objective. `fast` (issue 44 item 5): its F1 choice warned with precision 0.31
 * (unsure alone) or swung between measures fold to fold, so it is held to a precision floor.
 */
export const CONFIDENCE_OBJECTIVES: Record<Quality, ConfidenceObjective> = {
  fast: 'recall@precision0.5',
  balanced: 'f1',
  high: 'f1',
}

const MIN_PRECISION = 0.5

/** The objective's score of counts, compared lexicographically (higher is better). */
function score(c: Counts, objective: ConfidenceObjective): number[] {
  if (objective === 'f1') return [f1(c)]
  const flagged = c.tp + c.fp
  const precision = flagged ? c.tp / flagged : 0
  const recall = c.tp + c.fn ? c.tp / (c.tp + c.fn) : 0
  // Choices meeting the floor (with at least one find) rank above all others, which rank by F1.
  return precision >= MIN_PRECISION && c.tp ? [1, recall, precision] : [0, f1(c), 0]
}

const better = (a: number[], b: number[]) => {
  for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) > 1e-9) return a[i] > b[i]
  return false
}

/** The measure and threshold best by `objective` on `items` (ties: the earlier measure, the lower threshold). */
function choose(items: Item[], measures: DoubtMeasure[], objective: ConfidenceObjective = 'f1'): Choice {
  let best: Choice = { measure: measures[0], threshold: THRESHOLDS[0] }
  let bestScore = [-1, -1, -1]
  for (const measure of measures)
    for (const threshold of THRESHOLDS) {
      const sc = score(counts(items, { measure, threshold }), objective)
      if (better(sc, bestScore)) [best, bestScore] = [{ measure, threshold }, sc]
    }
  return best
}

const pr = ({ tp, fp, fn }: Counts) => ({
  tp,
  fp,
  fn,
  precision: tp + fp ? round(tp / (tp + fp), 3) : null,
  recall: tp + fn ? round(tp / (tp + fn), 3) : null,
})

/**
 * Leave-one-group-out: each group flagged by the choice among `measures` made on the others; per
 * fold its choice and its left-out group's counts, and the counts pooled over all folds.
 */
function crossValidated(items: Item[], measures: DoubtMeasure[], objective: ConfidenceObjective) {
  const folds: Record<string, Choice & ReturnType<typeof pr>> = {}
  const pooled = { tp: 0, fp: 0, fn: 0 }
  for (const g of GROUPS) {
    const test = items.filter((i) => i.group === g)
    if (!test.length) continue
    const choice = choose(
      items.filter((i) => i.group !== g),
      measures,
      objective,
    )
    const c = counts(test, choice)
    folds[g] = { ...choice, ...pr(c) }
    pooled.tp += c.tp
    pooled.fp += c.fp
    pooled.fn += c.fn
  }
  return { folds, ...pr(pooled) }
}

/** One level: nested cross-validated, per measure, in sample, and what ships. */
function evaluate(items: Item[], measures: DoubtMeasure[], shipped: Choice, objective: ConfidenceObjective) {
  const inSample = choose(items, measures, objective)
  return {
    objective,
    needsALook: items.filter((i) => i.bad).map((i) => i.name),
    crossValidated: crossValidated(items, measures, objective),
    inSample: { ...inSample, ...pr(counts(items, inSample)) },
    perMeasure: Object.fromEntries(
      measures.map((m) => {
        const own = choose(items, [m], objective)
        return [
          m,
          { crossValidated: crossValidated(items, [m], objective), inSample: { ...own, ...pr(counts(items, own)) } },
        ]
      }),
    ),
    // The same procedure by issue 31's objective, F1, for comparison.
    ...(objective === 'f1'
      ? {}
      : {
          byF1: {
            crossValidated: crossValidated(items, measures, 'f1'),
            perMeasure: Object.fromEntries(measures.map((m) => [m, crossValidated(items, [m], 'f1')])),
          },
        }),
    shipped: {
      ...shipped,
      ...pr(counts(items, shipped)),
      isInSampleChoice: JSON.stringify(inSample) === JSON.stringify(shipped),
    },
    flaggedByShipped: items
      .filter((i) => (i.confidence[shipped.measure] ?? 1) < shipped.threshold)
      .map((i) => `${i.name} (${i.confidence[shipped.measure]}${i.bad ? ', IoU < 0.8' : ''})`),
  }
}

/** One level's report (bench/confidence-gt.ts); `confidences` as for confidenceReport. */
export function levelConfidenceReport(
  rows: PairRow[],
  confidences: Record<string, Record<string, Partial<Record<DoubtMeasure, number>>>>,
  level: Quality,
) {
  const items: Item[] = rows.map((r) => ({
    name: r.name,
    group: r.group,
    confidence: confidences[r.name][level],
    bad: r.scores[level].iou < NEEDS_A_LOOK,
  }))
  return evaluate(
    items,
    CONFIDENCE_CANDIDATES[level],
    { measure: CONFIDENCE_RULES[level].measure, threshold: CONFIDENCE_RULES[level].threshold },
    CONFIDENCE_OBJECTIVES[level],
  )
}

/**
 * `confidences`: per pair, level and measure, what the server reports (levelConfidence of the
 * level's mask and doubts); each level is judged against its own IoU.
 */
export function confidenceReport(
  rows: PairRow[],
  confidences: Record<string, Record<string, Partial<Record<DoubtMeasure, number>>>>,
) {
  const levels = ['fast', 'balanced', 'high'] as const
  return {
    rule: `needs a look: IoU < ${NEEDS_A_LOOK}; flagged: confidence < threshold; measure and threshold by the level's objective`,
    ...Object.fromEntries(levels.map((l) => [l, levelConfidenceReport(rows, confidences, l)])),
  }
}
