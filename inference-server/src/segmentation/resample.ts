/**
 * @module
 * PIL's `Image.resize` (Pillow's libImaging/Resample.c) for interleaved 8-bit images: a separable
 * filter whose support widens with the shrink factor (so shrinking averages, like an antialiased
 * resize), a horizontal pass then a vertical one, each rounded back to 8 bits as Pillow stores
 * its intermediate image. The profiles' references resize this way (rembg: LANCZOS; torchvision's
 * Resize on a PIL image: BILINEAR); OpenCV's INTER_AREA is the box filter's average when shrinking.
 * `interpolate` is PyTorch's `F.interpolate(mode='bilinear', align_corners=False)`: the bilinear
 * kernel without the widening, so shrinking samples rather than averages (Pillow's taps at scale 1
 * are exactly PyTorch's two neighbours, edges clamped the same way).
 * The built-in ISNet keeps the reference package's own bilinear (resize.ts).
 */

export type Filter = 'bilinear' | 'bicubic' | 'lanczos' | 'box' | 'interpolate'

const sinc = (x: number): number => {
  if (x === 0) return 1
  const px = Math.PI * x
  return Math.sin(px) / px
}

function bicubic(t: number): number {
  const a = -0.5
  const x = Math.abs(t)
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a
  return 0
}

/** Each filter's kernel and its support (in source pixels at scale 1), as Pillow defines them. */
const FILTERS: Record<Filter, { support: number; kernel: (x: number) => number }> = {
  box: { support: 0.5, kernel: (x) => (x > -0.5 && x <= 0.5 ? 1 : 0) },
  bilinear: { support: 1, kernel: (x) => Math.max(0, 1 - Math.abs(x)) },
  interpolate: { support: 1, kernel: (x) => Math.max(0, 1 - Math.abs(x)) },
  // Pillow's bicubic (a = −0.5), the default of `Image.resize`.
  bicubic: { support: 2, kernel: bicubic },
  lanczos: { support: 3, kernel: (x) => (x > -3 && x < 3 ? sinc(x) * sinc(x / 3) : 0) },
}

/** One axis's taps: for output i, weights[i] over source indices first[i]…first[i] + weights[i].length − 1. */
interface Taps {
  first: Int32Array
  weights: Float64Array[]
}

/** Pillow's `precompute_coeffs`: centres at (i + 0.5) × scale, weights normalised to sum to 1. */
function taps(inSize: number, outSize: number, filter: Filter): Taps {
  const { support: base, kernel } = FILTERS[filter]
  const scale = inSize / outSize
  const filterScale = filter === 'interpolate' ? 1 : Math.max(scale, 1)
  const support = base * filterScale
  const first = new Int32Array(outSize)
  const weights: Float64Array[] = []
  for (let i = 0; i < outSize; i++) {
    const centre = (i + 0.5) * scale
    const lo = Math.max(Math.trunc(centre - support + 0.5), 0)
    const hi = Math.min(Math.trunc(centre + support + 0.5), inSize)
    const w = new Float64Array(Math.max(0, hi - lo))
    let sum = 0
    for (let x = 0; x < w.length; x++) {
      w[x] = kernel((x + lo - centre + 0.5) / filterScale)
      sum += w[x]
    }
    if (sum !== 0) for (let x = 0; x < w.length; x++) w[x] /= sum
    first[i] = lo
    weights.push(w)
  }
  return { first, weights }
}

const clip8 = (v: number): number => (v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v))

/**
 * Resizes an interleaved 8-bit image of `channels` channels.
 * @example resample(rgb, 640, 480, 3, 1024, 1024, 'lanczos') // Uint8Array(1024 * 1024 * 3)
 */
export function resample(
  src: Uint8Array,
  width: number,
  height: number,
  channels: number,
  outWidth: number,
  outHeight: number,
  filter: Filter,
): Uint8Array {
  // Pillow skips a pass whose axis keeps its size.
  let data = src
  if (outWidth !== width) {
    const { first, weights } = taps(width, outWidth, filter)
    const out = new Uint8Array(outWidth * height * channels)
    for (let y = 0; y < height; y++) {
      const row = y * width
      for (let x = 0; x < outWidth; x++) {
        const w = weights[x]
        const o = (y * outWidth + x) * channels
        for (let c = 0; c < channels; c++) {
          let v = 0
          for (let k = 0; k < w.length; k++) v += w[k] * data[(row + first[x] + k) * channels + c]
          out[o + c] = clip8(v)
        }
      }
    }
    data = out
  }
  if (outHeight !== height) {
    const { first, weights } = taps(height, outHeight, filter)
    const out = new Uint8Array(outWidth * outHeight * channels)
    const stride = outWidth * channels
    // Row by row (each tap adds a whole source row): sequential reads, 4× faster than per pixel.
    const acc = new Float64Array(stride)
    for (let y = 0; y < outHeight; y++) {
      const w = weights[y]
      acc.fill(0)
      for (let k = 0; k < w.length; k++) {
        const from = (first[y] + k) * stride
        const wk = w[k]
        for (let i = 0; i < stride; i++) acc[i] += wk * data[from + i]
      }
      const o = y * stride
      for (let i = 0; i < stride; i++) out[o + i] = clip8(acc[i])
    }
    data = out
  }
  return data === src ? new Uint8Array(src) : data
}
