/**
 * The removal options' alpha step, applied to the mask at source resolution:
 * `raw` keeps the model's soft alpha, `binary` makes it hard at `threshold`, and `feather`
 * (0–4 source pixels) then softens the edge; 0 leaves it untouched.
 */
import sharp from 'sharp'
import type { Mask } from './types.js'

export type AlphaOptions = { mode: 'raw'; feather: number } | { mode: 'binary'; threshold: number; feather: number }

/**
 * Hard mask: 255 where alpha / 255 ≥ threshold, else 0. So threshold 0 keeps every pixel and
 * threshold 1 keeps only fully opaque ones.
 */
export function thresholdMask(mask: Mask, threshold: number): Mask {
  // Compare in 8-bit space once, instead of dividing every pixel.
  const cut = Math.ceil(threshold * 255 - 1e-9)
  const data = new Uint8Array(mask.data.length)
  for (let i = 0; i < data.length; i++) data[i] = mask.data[i] >= cut ? 255 : 0
  return { data, width: mask.width, height: mask.height }
}

/**
 * The Gaussian sigma for a feather of `radius` pixels: the edge's transition is confined to about
 * ±radius (3 sigma) around where it was. sharp's smallest sigma is 0.3.
 */
export const featherSigma = (radius: number): number => Math.max(0.3, radius / 3)

/**
 * Softens the mask's edges with a Gaussian blur in libvips (no per-pixel JS).
 * @example await featherMask(mask, 2) // edge ramps over about 4 px
 */
export async function featherMask(mask: Mask, radius: number): Promise<Mask> {
  if (radius <= 0) return mask
  const { width, height } = mask
  const { data, info } = await sharp(mask.data, { raw: { width, height, channels: 1 } })
    // sharp's default minAmplitude (0.2) truncates the kernel short of 3 sigma, and its integer
    // precision rounds the tails away; both would cut the feather shorter than asked.
    .blur({ sigma: featherSigma(radius), precision: 'float', minAmplitude: 0.001 })
    // A 1-channel raw comes back as 3 channels unless told it is greyscale (STACK.md).
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true })
  if (info.channels !== 1) throw new Error(`expected a 1-channel mask after feather, got ${info.channels}`)
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width, height }
}

/**
 * Applies the whole alpha option to a model mask.
 * @example await applyAlpha(mask, { mode: 'binary', threshold: 0.5, feather: 1 })
 */
export async function applyAlpha(mask: Mask, options: AlphaOptions): Promise<Mask> {
  const hard = options.mode === 'binary' ? thresholdMask(mask, options.threshold) : mask
  return featherMask(hard, options.feather)
}
