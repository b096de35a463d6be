/**
 * Leave-one-group-out cross-validation of a choice made by measuring on ../shared/gt (issue 31):
 * for each group in turn, the candidate is chosen on the pairs of all other groups and scored on
 * the group left out; the in-sample figure (chosen on all pairs) is reported beside it. A choice
 * that only fits the photos it was chosen on shows as a gap between the two.
 */
import { round } from './util.js'

/** One pair's score under each candidate (lower is better), and its group. */
export interface CvPair {
  name: string
  group: string
  /** Per candidate key: the pair's loss, or null when the pair has none (COCO has no SAD). */
  loss: Record<string, number | null>
}

/**
 * How a candidate is judged on a set of pairs: [pairs worse than the reference beyond the
 * tolerance, mean loss], compared in that order, so a candidate that makes no pair clearly worse
 * always beats one that does (issue 31: "never worse than balanced").
 */
export function judge(pairs: CvPair[], key: string, reference: string, worse: (loss: number, ref: number) => boolean) {
  let n = 0
  let sum = 0
  let bad = 0
  for (const p of pairs) {
    const l = p.loss[key]
    const r = p.loss[reference]
    if (l === null || l === undefined || r === null || r === undefined) continue
    n++
    sum += l
    if (worse(l, r)) bad++
  }
  return { bad, mean: n ? sum / n : Number.POSITIVE_INFINITY }
}

/** The best candidate on `pairs` (ties: the earlier key, so put the safest first). */
export function choose(
  pairs: CvPair[],
  keys: string[],
  reference: string,
  worse: (loss: number, ref: number) => boolean,
): string {
  let best = keys[0]
  let bestJ = judge(pairs, best, reference, worse)
  for (const k of keys.slice(1)) {
    const j = judge(pairs, k, reference, worse)
    if (j.bad < bestJ.bad || (j.bad === bestJ.bad && j.mean < bestJ.mean - 1e-9)) [best, bestJ] = [k, j]
  }
  return best
}

export interface CvResult {
  /** The choice on all pairs, and per left-out group the choice made without it. */
  inSample: string
  folds: Record<string, string>
  /** Per pair: the candidate it is scored with out of sample (its group's fold's choice). */
  outOfSample: Record<string, string>
}

/**
 * Leave-one-group-out over `pairs`.
 * @example crossValidate(pairs, ['balanced', 'a', 'b'], 'balanced', worse).folds.DAVIS
 */
export function crossValidate(
  pairs: CvPair[],
  keys: string[],
  reference: string,
  worse: (loss: number, ref: number) => boolean,
): CvResult {
  const groups = [...new Set(pairs.map((p) => p.group))]
  const folds: Record<string, string> = {}
  for (const g of groups)
    folds[g] = choose(
      pairs.filter((p) => p.group !== g),
      keys,
      reference,
      worse,
    )
  const outOfSample = Object.fromEntries(pairs.map((p) => [p.name, folds[p.group]]))
  return { inSample: choose(pairs, keys, reference, worse), folds, outOfSample }
}

/** Issue 31's tolerance: worse than the reference by more than 5 % or 0.5 thousand, whichever is larger. */
export const clearlyWorse = (loss: number, ref: number): boolean => loss - ref > Math.max(0.05 * ref, 0.5)

export const mean = (xs: number[]): number | null =>
  xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length, 3) : null
