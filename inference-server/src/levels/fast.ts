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
 *   (arbitrate.ts's faint pass, with no other view), decided at the model input's pixels
 *   (workingSize) and brought to the photo's size, so its cost does not grow with the photo.
 */
import sharp from 'sharp'
import type { Mask, RgbImage } from '../imaging/types.js'
import type { ModelInput, Segmenter } from '../segmentation/index.js'
import { arbitrate } from './arbitrate.js'
import { UNSURE_BAND } from './bands.js'
import { colourCut } from './colour-cut.js'
import { applyWeights, type RaiseEdge, raiseWeights } from './raise-edge.js'
import { type InputShape, inputFor } from './sizes.js'

export interface FastOptions {
  /** The input: `side`² pixels, square or `lean` (sizes.ts). */
  side: number
  shape: InputShape
  /** The contrast stretch's levels (0..255), or null for none. */
  stretch: { lo: number; hi: number } | null
  /**
   * The colour-backed faint pass: levels (0..255), the region share the cut must call foreground,
   * and how the raised region's border is drawn (raise-edge.ts; absent: the cut's grid, nearest).
   */
  faint: { low: number; high: number; share: number; edge?: RaiseEdge } | null
}

/**
 * The in-sample choice of bench/quality-gt.ts on ../shared/gt's 48 pairs (docs/quality.md, with the
 * cross-validated figures): 704 × 640 (0.43 of 1024²'s pixels), the faint pass, the stretch 32–160.
 */
export const FAST_DEFAULTS: FastOptions = {
  side: 704,
  shape: 'lean',
  faint: { ...UNSURE_BAND, share: 0.5 },
  stretch: { lo: 32, hi: 160 },
}

/**
 * The alpha's contrast stretched: `lo` and below → 0, `hi` and above → 255, linear between.
 * @example stretchAlpha(Uint8Array.of(0, 32, 80, 128, 200), 32, 128) // [0, 0, 128, 255, 255]
 */
export function stretchAlpha(
  alpha: Uint8Array,
  lo: number,
  hi: number,
  /** Where to write (may be `alpha` itself); a new array when absent. */
  out: Uint8Array = new Uint8Array(alpha.length),
): Uint8Array {
  if (!(hi > lo)) throw new RangeError(`stretch needs hi > lo, got lo ${lo}, hi ${hi}`)
  const table = new Uint8Array(256)
  for (let v = 0; v < 256; v++) table[v] = Math.max(0, Math.min(255, Math.round(((v - lo) * 255) / (hi - lo))))
  // A plain loop: TypedArray.map with a closure took ~0.4 s at 12 MP.
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

/** What the faint pass decides from, at the finish's working size (finishBasis). */
export interface FinishBasis {
  /** The model's mask at the working size (the photo's own mask when that is the photo's size). */
  small: Mask
  /** The colour cut's sides at the working size (colour-cut.ts), or null. */
  cut: Uint8Array | null
  /** The photo at the working size (the raised border's matting solve, raise-edge.ts). */
  photo: RgbImage
}

/**
 * The finish's working size: the photo scaled (aspect kept) to at most `pixels`. The model saw the
 * photo at its input's pixels, so a faint region's decision holds nothing finer; deciding at that
 * size keeps the finish's cost from growing with the photo (12 MP: 1.38 s at full size, mostly
 * labelling regions, against 0.22 s; bench/results/levels-whole-issue31-s11.json).
 * @example workingSize({ width: 4000, height: 3000 }, 704 * 640) // { width: 775, height: 581 }
 */
export function workingSize(image: { width: number; height: number }, pixels: number) {
  const scale = Math.min(1, Math.sqrt(pixels / (image.width * image.height)))
  if (scale === 1) return { width: image.width, height: image.height }
  return {
    width: Math.max(1, Math.round(image.width * scale)),
    height: Math.max(1, Math.round(image.height * scale)),
  }
}

/** The mask (a plane) resized to `to`, bilinear, as sharp does it. */
async function resizePlane(mask: Mask, to: { width: number; height: number }): Promise<Uint8Array> {
  const out = await sharp(mask.data, { raw: { width: mask.width, height: mask.height, channels: 1 } })
    .resize(to.width, to.height, { fit: 'fill', kernel: 'linear' })
    .toColourspace('b-w') // a 1-channel raw comes back as 3 channels unless told (STACK.md)
    .raw()
    .toBuffer()
  return new Uint8Array(out.buffer, out.byteOffset, out.length)
}

/** The photo resized to `to`, bilinear. */
async function resizePhoto(image: RgbImage, to: { width: number; height: number }): Promise<RgbImage> {
  const out = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(to.width, to.height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer()
  return { data: new Uint8Array(out.buffer, out.byteOffset, out.length), ...to, channels: 3 }
}

/**
 * The faint pass's evidence for `mask` of `image` at a working size of at most `pixels`: the mask
 * there and the colour cut of its sure pixels. Independent of the pass's levels, so the benchmark
 * keeps one per photo and input.
 */
export async function finishBasis(image: RgbImage, mask: Mask, pixels = Number.POSITIVE_INFINITY) {
  const at = workingSize(image, pixels)
  const same = at.width === image.width && at.height === image.height
  // Three independent reads of the photo-sized planes (libvips, off the event loop): at once.
  const [data, photo, cut] = await Promise.all([
    same ? mask.data : resizePlane(mask, at),
    same ? image : resizePhoto(image, at),
    colourCut(image, [mask.data], {}, at),
  ])
  return { small: { ...at, data }, cut, photo } satisfies FinishBasis
}

/**
 * The pixels the faint pass raises, decided at the working size and brought to `mask`'s size by
 * nearest neighbour; raised there only where `mask` itself is faint (no sure pixel changes).
 */
function raiseAtWorkingSize(mask: Mask, basis: FinishBasis, faint: NonNullable<FastOptions['faint']>): Mask {
  const { small, cut } = basis
  const settled = arbitrate(small, [], cut, { faintLow: faint.low, faintHigh: faint.high, colourShare: faint.share })
  if (!settled.report.raised) return mask
  // A faint pixel (< faint.high ≤ 255) the pass raised is exactly one whose value changed.
  const raised = settled.mask.data
  if (faint.edge) {
    const on = new Uint8Array(raised.length)
    for (let s = 0; s < on.length; s++) on[s] = raised[s] !== small.data[s] ? 1 : 0
    const weights = raiseWeights(basis.photo, small, on, faint, faint.edge)
    return applyWeights(mask, weights, small.width, small.height, faint)
  }
  const { width: W, height: H, data: b } = mask
  const cols = Int32Array.from({ length: W }, (_, x) =>
    Math.min(small.width - 1, Math.floor(((x + 0.5) * small.width) / W)),
  )
  const out = new Uint8Array(b)
  for (let y = 0; y < H; y++) {
    const row = Math.min(small.height - 1, Math.floor(((y + 0.5) * small.height) / H)) * small.width
    for (let x = 0, i = y * W; x < W; x++, i++) {
      const s = row + cols[x]
      if (raised[s] !== small.data[s] && b[i] > faint.low && b[i] < faint.high) out[i] = 255
    }
  }
  return { ...mask, data: out }
}

/**
 * `fast`'s finish of the model's `mask` of `image` (both at the image's size): the faint pass,
 * decided at a working size of at most `pixels` (fastMask: the model input's), then the stretch,
 * as `o` says. `basis`: finishBasis's answer when the caller already has it (the benchmark).
 */
export async function finishFast(
  image: RgbImage,
  mask: Mask,
  o: FastOptions = FAST_DEFAULTS,
  pixels = Number.POSITIVE_INFINITY,
  basis?: FinishBasis,
): Promise<Mask> {
  let out = mask
  if (o.faint) out = raiseAtWorkingSize(mask, basis ?? (await finishBasis(image, mask, pixels)), o.faint)
  if (o.stretch) {
    // In place when the faint pass already made a copy: one fresh full-size plane fewer (12 MP).
    const into = out === mask ? undefined : out.data
    out = { ...out, data: stretchAlpha(out.data, o.stretch.lo, o.stretch.hi, into) }
  }
  return out
}

/**
 * Pixels the finish moved by more than 64 (of 255): what it decided that the model had left open,
 * part of `fast`'s confidence (confidence.ts).
 * @example finishMoved(Uint8Array.of(120, 0, 255), Uint8Array.of(255, 0, 250)) // 1
 */
export function finishMoved(model: Uint8Array, finished: Uint8Array): number {
  let n = 0
  for (let i = 0; i < model.length; i++) if (Math.abs(finished[i] - model[i]) > 64) n++
  return n
}

/** Where `fast`'s mask was decided (fastLevel): what later steps of its cutout need no finer than. */
export interface FastWorking {
  /** The model input's pixels: the finish's working size is the photo scaled to at most these. */
  pixels: number
  /** The photo at that working size (finishBasis's), when the finish ran. */
  photo?: RgbImage
}

/**
 * `fast`'s mask: one model run at its input, then the finish (only when that input is smaller than
 * the native one: a fixed-size model's `fast` is its `balanced`), the pixels the finish moved, and
 * where the mask was decided (remove.ts estimates the cutout's edge colours there).
 */
export async function fastLevel(
  model: Segmenter,
  image: RgbImage,
  o: FastOptions = FAST_DEFAULTS,
): Promise<{ mask: Mask; finished: number; working: FastWorking }> {
  const input = fastInputFor(image, model.input, o)
  const mask = await model.segment(image, input)
  const native = model.input.native
  const pixels = input.width * input.height
  if (input.width === native.width && input.height === native.height) return { mask, finished: 0, working: { pixels } }
  const basis = o.faint ? await finishBasis(image, mask, pixels) : undefined
  const out = await finishFast(image, mask, o, pixels, basis)
  return { mask: out, finished: finishMoved(mask.data, out.data), working: { pixels, photo: basis?.photo } }
}

/** `fast`'s mask alone (fastLevel). */
export async function fastMask(model: Segmenter, image: RgbImage, o: FastOptions = FAST_DEFAULTS): Promise<Mask> {
  return (await fastLevel(model, image, o)).mask
}
