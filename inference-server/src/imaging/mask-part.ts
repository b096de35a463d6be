/**
 * Masks as the editing routes receive them: a `mask` part is an 8-bit greyscale PNG (a revision,
 * or a removal job's `output=mask` result), or any image whose alpha channel is the mask (a
 * removal job's RGBA cutout). An image without alpha gives its first channel. Masks of another
 * size than the source are scaled with `resizeMask`, a plain-arithmetic filter, so the same
 * bytes give the same mask on every machine.
 */
import sharp from 'sharp'
import { MAX_PIXELS } from '../../../src/contract/limits.js'
import { InferenceError } from '../errors.js'
import type { Mask } from './types.js'

/**
 * Decodes a mask part to one 8-bit plane: the alpha channel when the image has one, else its
 * first channel (a greyscale mask, or an RGB one whose channels are equal).
 * @throws {InferenceError} `invalid_input` when the bytes are not a decodable image, 413 over 25 MP
 * @example await decodeMaskPart(png) // { data: Uint8Array(w * h), width, height }
 */
export async function decodeMaskPart(bytes: Uint8Array, part = 'mask'): Promise<Mask> {
  let hasAlpha: boolean
  let width: number
  let height: number
  try {
    ;({ hasAlpha = false, width = 0, height = 0 } = await sharp(bytes, { failOn: 'none' }).metadata())
  } catch (err) {
    throw new InferenceError('invalid_input', `Expected the ${part} part to be a PNG image`, { cause: err })
  }
  if (width * height > MAX_PIXELS) {
    throw new InferenceError('image_too_large', `Expected a ${part} of at most ${MAX_PIXELS} pixels`)
  }
  try {
    // sharp works on greyscale as sRGB, so channel indices past 0 are unreliable; 'alpha' is
    // the last channel whatever the layout (grey + alpha, RGBA, a palette with transparency).
    const { data, info } = await sharp(bytes, { failOn: 'warning', limitInputPixels: MAX_PIXELS, pages: 1 })
      .extractChannel(hasAlpha ? 'alpha' : 0)
      .toColourspace('b-w')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true })
    if (info.channels !== 1) throw new Error(`expected 1 channel, got ${info.channels}`)
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height }
  } catch (err) {
    const detail = err instanceof Error ? err.message.trim() : String(err)
    throw new InferenceError('invalid_input', `Could not decode the ${part} part: ${detail}`, { cause: err })
  }
}

/** One axis of a resize: for each output index, its first source index and its weights. */
interface AxisTaps {
  start: Int32Array
  count: Int32Array
  /** `taps` weights per output index, zero-padded, each row summing to 1. */
  weights: Float64Array
  taps: number
}

/**
 * A triangle (linear) filter on pixel centres, widened by the scale when shrinking so every
 * source pixel counts (no aliasing): bilinear when enlarging, an area-like average when reducing.
 */
function axisTaps(srcSize: number, dstSize: number): AxisTaps {
  const scale = srcSize / dstSize
  const support = Math.max(1, scale)
  const taps = Math.ceil(support) * 2 + 1
  const start = new Int32Array(dstSize)
  const count = new Int32Array(dstSize)
  const weights = new Float64Array(dstSize * taps)
  for (let i = 0; i < dstSize; i++) {
    const centre = (i + 0.5) * scale
    const lo = Math.max(0, Math.floor(centre - support))
    const hi = Math.min(srcSize, Math.ceil(centre + support))
    let sum = 0
    for (let k = lo; k < hi; k++) {
      const w = Math.max(0, 1 - Math.abs((k + 0.5 - centre) / support))
      weights[i * taps + k - lo] = w
      sum += w
    }
    // Sum is > 0: the source pixel nearest the centre is always within the support.
    for (let k = 0; k < hi - lo; k++) weights[i * taps + k] /= sum
    start[i] = lo
    count[i] = hi - lo
  }
  return { start, count, weights, taps }
}

/**
 * Scales a mask to `width`×`height` (a separable triangle filter, rows then columns).
 * @example resizeMask(mask, 4000, 3000)
 */
export function resizeMask(mask: Mask, width: number, height: number): Mask {
  if (mask.width === width && mask.height === height) return mask
  const { data: src, width: srcWidth, height: srcHeight } = mask
  const xs = axisTaps(srcWidth, width)
  const ys = axisTaps(srcHeight, height)
  // Rows first: the intermediate is the output's width and the source's height.
  const mid = new Float32Array(width * srcHeight)
  for (let y = 0; y < srcHeight; y++) {
    const row = y * srcWidth
    for (let x = 0; x < width; x++) {
      const from = row + xs.start[x]
      const w = x * xs.taps
      let v = 0
      for (let k = 0; k < xs.count[x]; k++) v += src[from + k] * xs.weights[w + k]
      mid[y * width + x] = v
    }
  }
  const out = new Uint8Array(width * height)
  // Then columns, a whole row of sums at a time (sequential reads of the intermediate).
  const acc = new Float64Array(width)
  for (let y = 0; y < height; y++) {
    acc.fill(0)
    for (let k = 0; k < ys.count[y]; k++) {
      const w = ys.weights[y * ys.taps + k]
      const row = (ys.start[y] + k) * width
      for (let x = 0; x < width; x++) acc[x] += mid[row + x] * w
    }
    const o = y * width
    for (let x = 0; x < width; x++) out[o + x] = Math.min(255, Math.max(0, Math.round(acc[x])))
  }
  return { data: out, width, height }
}
