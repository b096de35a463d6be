/**
 * The ground-truth report's means and issue 31's targets, from per-pair scores of each reported
 * method (`fast`, `balanced`, `high` as shipped, `high` cross-validated …).
 */
import { clearlyWorse, mean } from './cv.js'
import { GROUPS, type Group, type QuickScores } from './gt-score.js'
import { round } from './util.js'

export interface PairRow {
  name: string
  group: Group
  width: number
  height: number
  /** Per method. */
  scores: Record<string, QuickScores>
}

/** The means of one method over `rows`: matting metrics over the pairs that have them, IoU over all. */
export function means(rows: PairRow[], method: string) {
  const s = rows.map((r) => r.scores[method]).filter((x): x is QuickScores => !!x)
  const m = s.filter((x) => x.sad !== undefined)
  const pick = (f: (x: QuickScores) => number | undefined) => {
    const v = m.map(f).filter((x): x is number => x !== undefined)
    return v.length === m.length ? mean(v) : null
  }
  return {
    pairs: s.length,
    sad: pick((x) => x.sad),
    mse: pick((x) => x.mse),
    grad: pick((x) => x.grad),
    conn: pick((x) => x.conn),
    bandSad: pick((x) => x.bandSad),
    iou: mean(s.map((x) => x.iou)),
  }
}

/** Means per group and overall, per method. */
export function summary(rows: PairRow[], methods: string[]) {
  const out: Record<string, Record<string, ReturnType<typeof means>>> = {}
  for (const method of methods) {
    out[method] = { overall: means(rows, method) }
    for (const g of GROUPS)
      out[method][g] = means(
        rows.filter((r) => r.group === g),
        method,
      )
  }
  return out
}

/**
 * Issue 31's "done when" for `method` against `balanced`: mean SAD ≥ 15 % lower overall and lower
 * in every group; no pair worse by more than 5 % or 0.5 thousand; the five hardest pairs' (by
 * balanced's IoU) mean IoU up by ≥ 0.1.
 */
export function targets(rows: PairRow[], method: string) {
  const s = summary(rows, ['balanced', method])
  const b = s.balanced
  const h = s[method]
  const lowerPct = (x: number | null, y: number | null) => (x && y !== null ? round((100 * (x - y)) / x, 1) : null)
  const perGroup = Object.fromEntries(
    GROUPS.map((g) => [
      g,
      g === 'COCO'
        ? { iouBalanced: b[g].iou, iou: h[g].iou, notWorse: (h[g].iou ?? 0) >= (b[g].iou ?? 0) }
        : {
            sadBalanced: b[g].sad,
            sad: h[g].sad,
            lowerPct: lowerPct(b[g].sad, h[g].sad),
            lower: (h[g].sad ?? 0) < (b[g].sad ?? 0),
          },
    ]),
  )
  const worse = rows
    .filter((r) => r.scores[method]?.sad !== undefined && r.scores.balanced?.sad !== undefined)
    .map((r) => ({ name: r.name, balanced: r.scores.balanced.sad as number, [method]: r.scores[method].sad as number }))
    .filter((r) => clearlyWorse(r[method] as number, r.balanced))
  const hardest = [...rows].sort((x, y) => x.scores.balanced.iou - y.scores.balanced.iou).slice(0, 5)
  const hb = mean(hardest.map((r) => r.scores.balanced.iou)) ?? 0
  const hh = mean(hardest.map((r) => r.scores[method].iou)) ?? 0
  return {
    sadLowerPct: lowerPct(b.overall.sad, h.overall.sad),
    sadOk: (lowerPct(b.overall.sad, h.overall.sad) ?? 0) >= 15,
    lowerInEveryGroup: GROUPS.every((g) => (g === 'COCO' ? perGroup[g].notWorse : perGroup[g].lower)),
    perGroup,
    pairsWorseThanAllowed: worse,
    hardestFive: {
      names: hardest.map((r) => r.name),
      iouBalanced: hb,
      iou: hh,
      gain: round(hh - hb, 3),
      ok: hh - hb >= 0.1,
    },
  }
}
