/**
 * @module
 * `fast`'s method (issues 14, 22, 31): one model run at a smaller input (sizes.ts), then a finish
 * that costs no model run. At inputs below its native 1024², ISNet often gives a subject's body
 * half-sure (a plush teddy's jumper at 0.4–0.6, a duck's body at 0.5) where 1024² is sure: on
 * ../shared/gt that, not the edges, is most of `fast`'s extra error. Two finishes are measured
 * (bench/quality-gt.ts, chosen leave-one-group-out; docs/quality.md):
 * - `stretch`: the alpha's contrast stretched, (α − lo) / (hi − lo) clamped to 0..255, so a body
 *   at ≥ hi becomes sure foreground and a faint haze ≤ lo background;
 * - `faint`: regions between two levels that a colour model of the mask's sure pixels (OpenCV's
 *   GrabCut, colour-cut.ts) puts mostly on the foreground side are raised to foreground there
 *   (arbitrate.ts's faint pass, with no other view).
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { ModelInput, Segmenter } from '../segmentation/index.js'
import { arbitrate } from './arbitrate.js'
import { colourCut } from './colour-cut.js'
import { type FastShape, inputFor } from './sizes.js'

export interface FastOptions {
  /** The input: `side`² pixels, square, at the photo's aspect, or `lean` (sizes.ts). */
  side: number
  shape: FastShape
  /** The contrast stretch's levels (0..255), or null for none. */
  stretch: { lo: number; hi: number } | null
  /** The colour-backed faint pass: levels (0..255) and the region share the cut must call foreground. */
  faint: { low: number; high: number; share: number } | null
}

/**
 * The in-sample choice of bench/quality-gt.ts on ../shared/gt's 48 pairs (docs/quality.md, with the
 * cross-validated figures): 704 × 640 (0.43 of 1024²'s pixels), the faint pass, the stretch 32–160.
 */
export const FAST_DEFAULTS: FastOptions = {
  side: 704,
  shape: 'lean',
  faint: { low: 25, high: 230, share: 0.5 },
  stretch: { lo: 32, hi: 160 },
}

/**
 * The alpha's contrast stretched: `lo` and below → 0, `hi` and above → 255, linear between.
 * @example stretchAlpha(Uint8Array.of(0, 32, 80, 128, 200), 32, 128) // [0, 0, 128, 255, 255]
 */
export function stretchAlpha(alpha: Uint8Array, lo: number, hi: number): Uint8Array {
  if (!(hi > lo)) throw new RangeError(`stretch needs hi > lo, got lo ${lo}, hi ${hi}`)
  const table = new Uint8Array(256)
  for (let v = 0; v < 256; v++) table[v] = Math.max(0, Math.min(255, Math.round(((v - lo) * 255) / (hi - lo))))
  // A plain loop: TypedArray.map with a closure took ~0.4 s at 12 MP.
  const out = new Uint8Array(alpha.length)
  for (let i = 0; i < alpha.length; i++) out[i] = table[alpha[i]]
  return out
}

/** The input `fast` runs at: the native one when the model's size is fixed or set per photo. */
export function fastInputFor(
  image: { width: number; height: number },
  model: ModelInput,
  o: FastOptions = FAST_DEFAULTS,
) {
  if (model.kind !== 'any') return model.native
  return inputFor(image, o.side, o.shape, model.multiple)
}

/**
 * `fast`'s finish of the model's `mask` of `image` (both at the image's size): the faint pass,
 * then the stretch, as `o` says.
 */
export async function finishFast(image: RgbImage, mask: Mask, o: FastOptions = FAST_DEFAULTS): Promise<Mask> {
  let out = mask
  if (o.faint) {
    const cut = await colourCut(image, [mask.data])
    out = arbitrate(mask, [], cut, { faintLow: o.faint.low, faintHigh: o.faint.high, colourShare: o.faint.share }).mask
  }
  if (o.stretch) out = { ...out, data: stretchAlpha(out.data, o.stretch.lo, o.stretch.hi) }
  return out
}

/**
 * `fast`'s mask: one model run at its input, then the finish (only when that input is smaller than
 * the native one: a fixed-size model's `fast` is its `balanced`).
 */
export async function fastMask(model: Segmenter, image: RgbImage, o: FastOptions = FAST_DEFAULTS): Promise<Mask> {
  const input = fastInputFor(image, model.input, o)
  const mask = await model.segment(image, input)
  const native = model.input.native
  if (input.width === native.width && input.height === native.height) return mask
  return finishFast(image, mask, o)
}
