/**
 * @module
 * `high`'s rule for combining views (issue 31): `balanced`'s mask is the default everywhere, and a
 * region changes only when evidence other than the model's own confidence says the other views are
 * right there. Issue 22 kept the "most decisive" whole view; on photos nobody tuned on, a view
 * that is confidently wrong won as easily as one that is right (a plush teddy +37 % SAD).
 * - Where the other views depart from `balanced` by more than `delta` (gains and losses apart),
 *   each connected region is a dispute. Its evidence: the colour cut (colour-cut.ts: a colour
 *   model of what every view is sure of) putting at least `colourShare` of the region on their
 *   side; without it, `balanced`'s values stay. (Issue 31 also tried the views' agreement with one
 *   another as evidence, alone and with the colours; the colour cut alone ships, and only it remains.)
 * - Where `balanced` itself is faint but not empty (between `faintLow` and `faintHigh`, leaves the
 *   model half sees), a region the colour cut mostly calls foreground becomes foreground where it does.
 */
import type { Mask } from '../imaging/types.js'
import { label } from '../refinement/components.js'

export interface ArbitrationOptions {
  /** A view departs from `balanced` where they differ by more than this (0..255). */
  delta: number
  /** Regions below this share of the photo are left alone (speckle). */
  minArea: number
  /** The share of a region the colour cut must put on the other views' side for it to change. */
  colourShare: number
  /**
   * Split each disputed region by the evidence first: the regions are then the connected parts
   * where the cut is on the other views' side, so a region half right and half wrong is not
   * decided as one. Explored by the benchmark (bench/lib/high-candidates.ts); ships off.
   */
  split: boolean
  /**
   * `gain`: only regions the other views add to the subject (parts `balanced` lost) are disputed;
   * `both` (explored by the benchmark, never shipped) disputes what they take away too.
   */
  directions: 'both' | 'gain'
  /** The faint pass: `balanced` in (faintLow, faintHigh) over a region; off when faintHigh ≤ faintLow. */
  faintLow: number
  faintHigh: number
}

export const ARBITRATION_DEFAULTS: ArbitrationOptions = {
  delta: 64,
  minArea: 0.0005,
  colourShare: 0.8,
  split: false,
  directions: 'gain',
  faintLow: 0,
  faintHigh: 0,
}

/** What happened, for the confidence (confidence.ts) and the benchmark. */
export interface ArbitrationReport {
  /** Pixels some other view disputes (whatever the region's size), and how many changed. */
  disputed: number
  /** Pixels where some other view departs from base by more than `delta`, either way (the confidence). */
  departed: number
  changed: number
  regions: number
  taken: number
  /** Pixels the faint pass raised. */
  raised: number
}

/** The regions of `on` at least `min` pixels large, with their pixel lists. */
function regions(on: Uint8Array, width: number, height: number, min: number): number[][] {
  const { labels, count } = label(on, width, height)
  const lists: number[][] = Array.from({ length: count }, () => [])
  for (let i = 0; i < labels.length; i++) if (labels[i]) lists[labels[i] - 1].push(i)
  return lists.filter((r) => r.length >= min)
}

/**
 * `base` with the disputed regions the evidence settles for the other `views` (all at base's size)
 * and, when on, the faint regions the colour cut calls foreground. `cut`: colour-cut.ts's sides
 * (1 foreground), or null when there is none.
 */
export function arbitrate(
  base: Mask,
  views: Uint8Array[],
  cut: Uint8Array | null,
  options: Partial<ArbitrationOptions> = {},
): { mask: Mask; report: ArbitrationReport } {
  const o = { ...ARBITRATION_DEFAULTS, ...options }
  const { width, height, data: b } = base
  const out = new Uint8Array(b)
  const report: ArbitrationReport = { disputed: 0, departed: 0, changed: 0, regions: 0, taken: 0, raised: 0 }
  const min = Math.max(1, Math.round(o.minArea * b.length))
  if (views.length) {
    report.departed = departedPixels(b, views, o.delta)
    for (const gain of o.directions === 'gain' ? [true] : [true, false]) {
      // Where some view departs from base in this direction (and, split, where the cut backs it).
      const on = new Uint8Array(b.length)
      const departs = (v: Uint8Array, i: number) => (gain ? v[i] - b[i] > o.delta : b[i] - v[i] > o.delta)
      const backedAt = (i: number) => (cut && cut[i] === (gain ? 1 : 0) ? 1 : 0)
      for (let i = 0; i < b.length; i++)
        if (views.some((v) => departs(v, i))) {
          report.disputed++
          on[i] = !o.split || backedAt(i) ? 1 : 0
        }
      for (const r of regions(on, width, height, min)) {
        report.regions++
        let colour = 0
        for (const i of r) colour += backedAt(i)
        // No cut, no evidence: the region stays as `balanced` has it.
        if (!cut || colour / r.length < o.colourShare) continue
        report.taken++
        report.changed += r.length
        // The departing views' mean: the other views' answer for this region.
        for (const i of r) {
          let sum = 0
          let n = 0
          for (const v of views)
            if (departs(v, i)) {
              sum += v[i]
              n++
            }
          out[i] = Math.round(sum / n)
        }
      }
    }
  }
  if (cut && o.faintHigh > o.faintLow) report.raised = raiseFaint(out, b, cut, width, height, min, o)
  return { mask: { data: out, width, height }, report }
}

/** Pixels where some view differs from `b` by more than `delta` (plain loops: 12 MP photos). */
function departedPixels(b: Uint8Array, views: Uint8Array[], delta: number): number {
  const off = new Uint8Array(b.length)
  for (const v of views) for (let i = 0; i < b.length; i++) if (Math.abs(v[i] - b[i]) > delta) off[i] = 1
  let n = 0
  for (let i = 0; i < off.length; i++) n += off[i]
  return n
}

/** The faint pass, in place on `out`; returns the pixels raised. */
function raiseFaint(
  out: Uint8Array,
  b: Uint8Array,
  cut: Uint8Array,
  width: number,
  height: number,
  min: number,
  o: ArbitrationOptions,
): number {
  const on = new Uint8Array(b.length)
  for (let i = 0; i < b.length; i++) on[i] = b[i] > o.faintLow && b[i] < o.faintHigh && out[i] === b[i] ? 1 : 0
  let raised = 0
  for (const r of regions(on, width, height, min)) {
    let fg = 0
    for (const i of r) fg += cut[i]
    if (fg / r.length < o.colourShare) continue
    // Foreground where the cut vouches for it (the matting solve then softens its edge).
    for (const i of r)
      if (cut[i]) {
        out[i] = 255
        raised++
      }
  }
  return raised
}
