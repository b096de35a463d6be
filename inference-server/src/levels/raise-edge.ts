/**
 * @module
 * The faint pass's edge (session 12): the pass (arbitrate.ts raiseFaint) raises the pixels a colour
 * cut calls foreground, and the cut runs on a grid of at most 20 000 pixels (colour-cut.ts), so the
 * raised region's border is a staircase of that grid's steps (~5 px on an 800 × 529 photo) where it
 * meets the part of the faint region left as it was (an ostrich's fluffy side). Here the raise
 * becomes a weight (0..1 per pixel): 1 inside the raised region, 0 outside, and within `steps` grid
 * steps of its border, on the faint pixels there,
 * - `ramp`: the raised region's box mean (a soft ramp across each step, blind to the photo);
 * - `matte`: the closed-form matting solve (matting.ts solveInBox: Levin et al.'s Laplacian, the
 *   photo's colours as guide) with the rest held, pulled weakly towards the ramp, so the border
 *   moves to the photo's own edge between the colours inside and outside.
 * The pass then sets a faint pixel v to v + w·(255 − v).
 */
import { boxMean } from '../imaging/refine.js'
import { type Box, MATTING_DEFAULTS, solveInBox } from '../imaging/matting.js'
import type { Mask, RgbImage } from '../imaging/types.js'
import { COLOUR_CUT_DEFAULTS } from './colour-cut.js'

export interface RaiseEdge {
  /** `matte` ships (HIGH_DEFAULTS); `ramp` is the benchmark's comparison (bench/lib/high-candidates.ts). */
  method: 'ramp' | 'matte'
  /** The band's half-width in the colour cut's grid steps. */
  steps: number
}

/** CG iterations of the edge's solve: the band is ~2 grid steps wide and radius-1 windows move ~2 px an iteration. */
const ITERATIONS = 40
/** The solve's tiles (working pixels; each solved with a margin of the band's half-width + 4). */
const TILE = 64
/** The band's weak pull towards the ramp, where the photo says nothing (MATTING_DEFAULTS: 0.05, pulls too hard here). */
const PRIOR = 0.01

/**
 * The colour cut's grid step, in pixels of `size`: its grid has at most `maxPixels` pixels.
 * @example cutStep({ width: 800, height: 529 }) // 4.6
 */
export function cutStep(size: { width: number; height: number }, maxPixels = COLOUR_CUT_DEFAULTS.maxPixels) {
  return Math.max(1, Math.sqrt((size.width * size.height) / maxPixels))
}

/**
 * The raise weight per pixel of `small` (the mask the pass decided on; `photo` at its size):
 * `raised` (1 where the pass raised) with its border band re-estimated as `edge` says.
 */
export function raiseWeights(
  photo: RgbImage,
  small: Mask,
  raised: Uint8Array,
  faint: { low: number; high: number },
  edge: RaiseEdge,
): Float32Array {
  const { width, height, data: b } = small
  // Sure foreground counts as raised: the pass leaves it as it is, and the border that matters is
  // the raised region's against what stays faint (or the background).
  const R = new Float32Array(b.length)
  for (let i = 0; i < b.length; i++) R[i] = raised[i] || b[i] >= faint.high ? 1 : 0
  const d = Math.max(1, Math.round(edge.steps * cutStep(small)))
  const ramp = boxMean(R, width, height, d)
  // The band: faint pixels near what the pass raised (not near any sure pixel: a faint region the
  // pass did not raise keeps its values) and not deep inside the raised region.
  const near = boxMean(Float32Array.from(raised), width, height, d)
  const faintAt = (i: number) => b[i] > faint.low && b[i] < faint.high
  const band = new Uint8Array(b.length)
  for (let i = 0; i < b.length; i++) band[i] = faintAt(i) && near[i] > 1e-6 && ramp[i] < 1 - 1e-6 ? 1 : 0
  const out = Float32Array.from(R)
  if (edge.method === 'ramp') {
    for (let i = 0; i < b.length; i++) if (band[i]) out[i] = ramp[i]
    return out
  }
  // Tile by tile (each with a margin wider than the band): the band is a thin line through a box
  // that is often most of the photo, and the solve costs by the box's pixels.
  for (let ty = 0; ty < height; ty += TILE)
    for (let tx = 0; tx < width; tx += TILE) {
      const core = { x0: tx, y0: ty, x1: Math.min(width, tx + TILE), y1: Math.min(height, ty + TILE) }
      if (hasBand(band, width, core))
        solveTile(photo, b, band, R, ramp, faint.high, grow(core, d + 4, width, height), core, out)
    }
  return out
}

/** Is any pixel of `band` (a plane `width` wide) inside `box`? */
function hasBand(band: Uint8Array, width: number, box: Box): boolean {
  for (let y = box.y0; y < box.y1; y++) for (let x = box.x0; x < box.x1; x++) if (band[y * width + x]) return true
  return false
}

const grow = (b: Box, m: number, width: number, height: number): Box => ({
  x0: Math.max(0, b.x0 - m),
  y0: Math.max(0, b.y0 - m),
  x1: Math.min(width, b.x1 + m),
  y1: Math.min(height, b.y1 + m),
})

/**
 * One tile's solve over `box`: the band and sure foreground (its weight is moot) follow the
 * photo, pulled weakly towards the ramp; the rest is held at the raise. Writes the band pixels
 * of `core` into `out`.
 */
function solveTile(
  photo: RgbImage,
  b: Uint8Array,
  band: Uint8Array,
  R: Float32Array,
  ramp: Float32Array,
  sure: number,
  box: Box,
  core: Box,
  out: Float32Array,
) {
  const { width } = photo
  const w = box.x1 - box.x0
  const h = box.y1 - box.y0
  const target = new Float32Array(w * h)
  const lambda = new Float32Array(w * h)
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y + box.y0) * width + x + box.x0
      const free = band[i] || b[i] >= sure
      target[y * w + x] = free ? ramp[i] : R[i]
      lambda[y * w + x] = free ? PRIOR : MATTING_DEFAULTS.knownWeight
    }
  const x = solveInBox(photo, box, target, lambda, { ...MATTING_DEFAULTS, iterations: ITERATIONS, tolerance: 1e-6 })
  for (let y = core.y0; y < core.y1; y++)
    for (let xx = core.x0; xx < core.x1; xx++) {
      const i = y * width + xx
      if (band[i]) out[i] = Math.min(1, Math.max(0, x[(y - box.y0) * w + xx - box.x0]))
    }
}

/**
 * `weights` (ws × hs) sampled bilinearly (half-pixel centres) at every pixel of a W × H plane, and
 * applied to `mask`'s faint pixels (v → v + w·(255 − v)); the rest unchanged.
 */
export function applyWeights(
  mask: Mask,
  weights: Float32Array,
  ws: number,
  hs: number,
  faint: { low: number; high: number },
): Mask {
  const { width: W, height: H, data: b } = mask
  const axis = (n: number, m: number) =>
    Array.from({ length: n }, (_, i) => {
      const s = Math.min(Math.max((i + 0.5) * (m / n) - 0.5, 0), m - 1)
      const lo = Math.floor(s)
      return { lo, hi: Math.min(lo + 1, m - 1), f: s - lo }
    })
  const xs = axis(W, ws)
  const ys = axis(H, hs)
  const out = new Uint8Array(b)
  for (let y = 0; y < H; y++) {
    const { lo: y0, hi: y1, f: fy } = ys[y]
    for (let x = 0, i = y * W; x < W; x++, i++) {
      if (!(b[i] > faint.low && b[i] < faint.high)) continue
      const { lo: x0, hi: x1, f: fx } = xs[x]
      const top = weights[y0 * ws + x0] * (1 - fx) + weights[y0 * ws + x1] * fx
      const bottom = weights[y1 * ws + x0] * (1 - fx) + weights[y1 * ws + x1] * fx
      const wgt = top + (bottom - top) * fy
      if (wgt > 0) out[i] = Math.round(b[i] + wgt * (255 - b[i]))
    }
  }
  return { ...mask, data: out }
}
