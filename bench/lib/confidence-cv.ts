/**
 * How well the confidence (inference-server/src/levels/confidence.ts) flags the pairs a person
 * should look at (IoU < 0.8 against the truth), per level, its measure and threshold chosen
 * leave-one-group-out (issue 31). Each level has a few candidate measures (the unsure band alone,
 * or with what the level's own steps doubted: CONFIDENCE_CANDIDATES). For each group in turn, the
 * measure and threshold with the best F1 on the other groups flag the left-out group; precision and
 * recall are then counted over all pairs, each flagged by a choice made without its group (the
 * lead, "nested" figure). Beside it: each measure alone with only its threshold chosen per fold,
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

/** The measure and threshold with the best F1 on `items` (ties: the earlier measure, the lower threshold). */
function choose(items: Item[], measures: DoubtMeasure[]): Choice {
  let best: Choice = { measure: measures[0], threshold: THRESHOLDS[0] }
  let bestF = -1
  for (const measure of measures)
    for (const threshold of THRESHOLDS) {
      const f = f1(counts(items, { measure, threshold }))
      if (f > bestF + 1e-9) [best, bestF] = [{ measure, threshold }, f]
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

/** Leave-one-group-out: each group flagged by the choice among `measures` made on the others. */
function crossValidated(items: Item[], measures: DoubtMeasure[]) {
  const folds: Record<string, Choice> = {}
  const pooled = { tp: 0, fp: 0, fn: 0 }
  for (const g of GROUPS) {
    const test = items.filter((i) => i.group === g)
    if (!test.length) continue
    folds[g] = choose(
      items.filter((i) => i.group !== g),
      measures,
    )
    const c = counts(test, folds[g])
    pooled.tp += c.tp
    pooled.fp += c.fp
    pooled.fn += c.fn
  }
  return { folds, ...pr(pooled) }
}

/** One level: nested cross-validated, per measure, in sample, and what ships. */
function evaluate(items: Item[], measures: DoubtMeasure[], shipped: Choice) {
  const inSample = choose(items, measures)
  return {
    needsALook: items.filter((i) => i.bad).map((i) => i.name),
    crossValidated: crossValidated(items, measures),
    inSample: { ...inSample, ...pr(counts(items, inSample)) },
    perMeasure: Object.fromEntries(
      measures.map((m) => {
        const own = choose(items, [m])
        return [m, { crossValidated: crossValidated(items, [m]), inSample: { ...own, ...pr(counts(items, own)) } }]
      }),
    ),
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

/**
 * `confidences`: per pair, level and measure, what the server reports (levelConfidence of the
 * level's mask and doubts); each level is judged against its own IoU.
 */
export function confidenceReport(
  rows: PairRow[],
  confidences: Record<string, Record<string, Partial<Record<DoubtMeasure, number>>>>,
) {
  const items = (level: Quality): Item[] =>
    rows.map((r) => ({
      name: r.name,
      group: r.group,
      confidence: confidences[r.name][level],
      bad: r.scores[level].iou < NEEDS_A_LOOK,
    }))
  const levels = ['fast', 'balanced', 'high'] as const
  return {
    rule: `needs a look: IoU < ${NEEDS_A_LOOK}; flagged: confidence < threshold; measure and threshold by F1`,
    ...Object.fromEntries(
      levels.map((l) => [
        l,
        evaluate(items(l), CONFIDENCE_CANDIDATES[l], {
          measure: CONFIDENCE_RULES[l].measure,
          threshold: CONFIDENCE_RULES[l].threshold,
        }),
      ]),
    ),
  }
}
