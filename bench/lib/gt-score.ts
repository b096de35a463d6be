/**
 * Scoring one level's alpha on one pair of ../shared/gt the way its README says (issue 31):
 * - groups: alphamatting (am*, alphamatting-*), DAVIS (davis-*, davis345-*), GrabCut (grabcut-*),
 *   COCO (cocomval-*);
 * - GrabCut's truth value 128 is an unlabelled band: those pixels are left out of every metric;
 * - COCO's truth is a rasterised polygon: IoU only (edge metrics would measure the polygon);
 * - every other group: SAD, MSE, gradient and connectivity errors over the whole image and over
 *   the truth's edge band (bench/lib/matting-metrics.ts), and IoU of the alphas at 0.5.
 */
import { edgeBand, matting, type MattingScores } from './matting-metrics.js'

export const GROUPS = ['alphamatting', 'DAVIS', 'GrabCut', 'COCO'] as const
export type Group = (typeof GROUPS)[number]

/** The group of a pair by its name. */
export function groupOf(name: string): Group {
  if (name.startsWith('am') || name.startsWith('alphamatting-')) return 'alphamatting'
  if (name.startsWith('davis')) return 'DAVIS'
  if (name.startsWith('grabcut-')) return 'GrabCut'
  if (name.startsWith('cocomval-')) return 'COCO'
  throw new Error(`no group for ${name}`)
}

/** Does this group's truth support the matting metrics (SAD …), or only IoU? */
export const hasMatting = (group: Group): boolean => group !== 'COCO'

export interface PairScores {
  iou: number
  /** Absent on COCO (IoU only). */
  whole?: MattingScores
  band?: MattingScores
}

/** The pixels scored: all but GrabCut's unlabelled 128 band (null: all). */
export function scoredRegion(name: string, truth: Float32Array): Uint8Array | null {
  if (groupOf(name) !== 'GrabCut') return null
  return Uint8Array.from(truth, (t) => (Math.round(t * 255) === 128 ? 0 : 1))
}

/** The edge band's half-width: about 1 % of the long side (11 px on the 854×480 DAVIS frames). */
export const bandRadius = (width: number, height: number): number =>
  Math.max(5, Math.round(Math.max(width, height) / 80))

/** IoU of est ≥ 0.5 against truth ≥ 0.5 over `region` (1 when both are empty). */
export function iou(est: Float32Array, truth: Float32Array, region: Uint8Array | null): number {
  let inter = 0
  let union = 0
  for (let i = 0; i < est.length; i++) {
    if (region && !region[i]) continue
    const a = est[i] >= 0.5
    const b = truth[i] >= 0.5
    if (a && b) inter++
    if (a || b) union++
  }
  return union ? Math.round((inter / union) * 10000) / 10000 : 1
}

/** What a pair's scoring needs once, whatever the alpha: the scored region and the edge band in it. */
export interface PairTruth {
  name: string
  group: Group
  width: number
  height: number
  truth: Float32Array
  region: Uint8Array | null
  band: Uint8Array
}

export function pairTruth(name: string, truth: Float32Array, width: number, height: number): PairTruth {
  const region = scoredRegion(name, truth)
  // Truth with GrabCut's band made background for finding edges, so its band edge is no "edge".
  const band = edgeBand(truth, width, height, bandRadius(width, height))
  if (region) for (let i = 0; i < band.length; i++) band[i] &= region[i]
  return { name, group: groupOf(name), width, height, truth, region, band }
}

/** quickScore plus the gradient and connectivity errors over the whole image (seconds a pair). */
export function fullScore(p: PairTruth, alpha8: Uint8Array): QuickScores {
  const out = quickScore(p, alpha8)
  if (!hasMatting(p.group)) return out
  const m = matting(
    Float32Array.from(alpha8, (v) => v / 255),
    p.truth,
    p.width,
    p.height,
    p.region ?? undefined,
  )
  return { ...out, grad: m.grad, conn: m.conn }
}

/**
 * Scores an 8-bit alpha against the pair's truth.
 * @example score(pairTruth('davis-dog', truth, w, h), alpha8).iou
 */
export function score(p: PairTruth, alpha8: Uint8Array): PairScores {
  const est = Float32Array.from(alpha8, (v) => v / 255)
  const out: PairScores = { iou: iou(est, p.truth, p.region) }
  if (!hasMatting(p.group)) return out
  out.whole = matting(est, p.truth, p.width, p.height, p.region ?? undefined)
  out.band = matting(est, p.truth, p.width, p.height, p.band)
  return out
}

/** What the candidates are chosen and compared on (cheap: no gradient or connectivity). */
export interface QuickScores {
  iou: number
  /** SAD and band SAD in thousands, MSE × 1000; absent on COCO. */
  sad?: number
  mse?: number
  bandSad?: number
  /** Gradient and connectivity errors (thousands), with --full only (they cost seconds a pair). */
  grad?: number
  conn?: number
}

export function quickScore(p: PairTruth, alpha8: Uint8Array): QuickScores {
  const out: QuickScores = { iou: 0 }
  let sad = 0
  let se = 0
  let n = 0
  let band = 0
  let inter = 0
  let union = 0
  for (let i = 0; i < alpha8.length; i++) {
    if (p.region && !p.region[i]) continue
    const e = alpha8[i] / 255
    const t = p.truth[i]
    const d = Math.abs(e - t)
    sad += d
    se += d * d
    n++
    if (p.band[i]) band += d
    if (e >= 0.5 && t >= 0.5) inter++
    if (e >= 0.5 || t >= 0.5) union++
  }
  out.iou = union ? Math.round((inter / union) * 10000) / 10000 : 1
  if (hasMatting(p.group)) {
    out.sad = Math.round(sad) / 1000
    out.mse = Math.round((1e6 * se) / Math.max(1, n)) / 1000
    out.bandSad = Math.round(band) / 1000
  }
  return out
}
