/**
 * How well the confidence (inference-server/src/levels/confidence.ts) flags the pairs a person
 * should look at (IoU < 0.8 against the truth), and its threshold chosen leave-one-group-out
 * (issue 31): for each group, the threshold that maximises F1 on the other groups flags the left-out
 * group; precision and recall are then counted over all pairs, each flagged by a threshold chosen
 * without it. The in-sample threshold (chosen on all pairs) is the one the server ships.
 */
import { GROUPS } from './gt-score.js'
import type { PairRow } from './gt-report.js'
import { round } from './util.js'

const NEEDS_A_LOOK = 0.8
type Counts = { tp: number; fp: number; fn: number }
const THRESHOLDS = Array.from({ length: 19 }, (_, k) => round(0.05 * (k + 1), 2))

interface Item {
  name: string
  group: string
  confidence: number
  bad: boolean
}

function counts(items: Item[], t: number) {
  let tp = 0
  let fp = 0
  let fn = 0
  for (const it of items) {
    const flagged = it.confidence < t
    if (flagged && it.bad) tp++
    else if (flagged) fp++
    else if (it.bad) fn++
  }
  return { tp, fp, fn }
}
const f1 = ({ tp, fp, fn }: Counts) => (tp ? (2 * tp) / (2 * tp + fp + fn) : 0)

/** The threshold with the best F1 on `items` (ties: the lower, which flags fewer). */
function chooseThreshold(items: Item[]): number {
  let best = THRESHOLDS[0]
  let bestF = -1
  for (const t of THRESHOLDS) {
    const f = f1(counts(items, t))
    if (f > bestF + 1e-9) [best, bestF] = [t, f]
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

/** Leave-one-group-out and in-sample precision/recall of one level's confidence. */
function evaluate(items: Item[]) {
  const folds: Record<string, number> = {}
  const pooled = { tp: 0, fp: 0, fn: 0 }
  for (const g of GROUPS) {
    const test = items.filter((i) => i.group === g)
    if (!test.length) continue
    folds[g] = chooseThreshold(items.filter((i) => i.group !== g))
    const c = counts(test, folds[g])
    pooled.tp += c.tp
    pooled.fp += c.fp
    pooled.fn += c.fn
  }
  const inSample = chooseThreshold(items)
  return {
    needsALook: items.filter((i) => i.bad).map((i) => i.name),
    crossValidated: { thresholds: folds, ...pr(pooled) },
    inSample: { threshold: inSample, ...pr(counts(items, inSample)) },
    flaggedInSample: items.filter((i) => i.confidence < inSample).map((i) => `${i.name} (${i.confidence})`),
  }
}

/**
 * `confidences`: per pair and level, what the server reports (maskConfidence of the level's mask,
 * with `high`'s disputed share); each level is judged against its own IoU.
 */
export function confidenceReport(rows: PairRow[], confidences: Record<string, Record<string, number>>) {
  const items = (level: string): Item[] =>
    rows.map((r) => ({
      name: r.name,
      group: r.group,
      confidence: confidences[r.name][level],
      bad: r.scores[level].iou < NEEDS_A_LOOK,
    }))
  return {
    rule: `needs a look: IoU < ${NEEDS_A_LOOK}; flagged: confidence < threshold`,
    fast: evaluate(items('fast')),
    balanced: evaluate(items('balanced')),
    high: evaluate(items('high')),
  }
}
