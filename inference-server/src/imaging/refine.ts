/**
 * `quality=high` at source resolution. The model sees the image at 1024², so on a large photo its
 * upscaled mask edge is several source pixels soft and does not follow the photo's own edges.
 * - refineMask: a colour guided filter (He, Sun & Tang 2010, §3.5: the 3×3 covariance form) of the
 *   mask, guided by the photo's RGB. Only the mask's uncertain pixels (neither 0 nor 255) take the
 *   filtered value; a plain guided filter also spreads faint tails into the certain background.
 * - decontaminate: the colour of those edge pixels is a mix αF + (1 − α)B of foreground and
 *   background; "blur fusion" (Forte & Pitié 2021, Approximate Fast Foreground Colour Estimation)
 *   estimates F so a cutout's edges do not carry the old background's colour onto a new one.
 * Window statistics are computed at most `maxWorkPixels` (the "fast guided filter", He & Sun 2015):
 * coefficients at a reduced size, sampled bilinearly and applied at full size, only where needed.
 */
import sharp from 'sharp'
import { colourWindows, invertCovariance } from './colour-window.js'
import type { Mask, RgbImage } from './types.js'

export interface RefineOptions {
  /** Window radius in source pixels; by default 2 model pixels' worth (source long side / 1024 × 2), at least 2: about the half-width of the upscaled model edge. */
  radius?: number
  /** Regularisation (guide in 0..1): larger keeps more of the original mask. */
  eps?: number
  /** Work at most this many pixels for the window statistics. */
  maxWorkPixels?: number
  /** `colour` (default) solves the 3×3 system per window; `grey` uses luminance only (cheaper, blind to equal-luminance colour edges). */
  guide?: 'colour' | 'grey'
}

/** The defaults of `high`, measured with bench/quality-synthetic.ts (docs/quality.md). */
export const REFINE_DEFAULTS = { eps: 1e-5, maxWorkPixels: 4_000_000, modelPixels: 2 } as const

/** Mean over a (2r+1)² window, clipped at the borders, by separable running sums: O(n) for any r. */
export function boxMean<T extends Float32Array | Float64Array = Float32Array>(
  src: Float32Array | Float64Array,
  width: number,
  height: number,
  r: number,
  out: T = new Float32Array(src.length) as T,
  tmp: Float32Array | Float64Array = new Float32Array(src.length),
): T {
  for (let y = 0; y < height; y++) {
    const row = y * width
    let sum = 0
    for (let x = 0; x <= Math.min(r, width - 1); x++) sum += src[row + x]
    for (let x = 0; x < width; x++) {
      const lo = Math.max(0, x - r)
      const hi = Math.min(width - 1, x + r)
      tmp[row + x] = sum / (hi - lo + 1)
      if (x + r + 1 < width) sum += src[row + x + r + 1]
      if (x - r >= 0) sum -= src[row + x - r]
    }
  }
  for (let x = 0; x < width; x++) {
    let sum = 0
    for (let y = 0; y <= Math.min(r, height - 1); y++) sum += tmp[y * width + x]
    for (let y = 0; y < height; y++) {
      const lo = Math.max(0, y - r)
      const hi = Math.min(height - 1, y + r)
      out[y * width + x] = sum / (hi - lo + 1)
      if (y + r + 1 < height) sum += tmp[(y + r + 1) * width + x]
      if (y - r >= 0) sum -= tmp[(y - r) * width + x]
    }
  }
  return out
}

interface Work {
  /** Working size and the factor from source to working pixels (≤ 1). */
  ww: number
  wh: number
  scale: number
}

function workSize(width: number, height: number, maxWorkPixels: number): Work {
  const scale = Math.min(1, Math.sqrt(maxWorkPixels / (width * height)))
  return { ww: Math.max(1, Math.round(width * scale)), wh: Math.max(1, Math.round(height * scale)), scale }
}

/** 8-bit raw (1 or 3 channels) → planar floats in 0..1 at the working size (libvips linear resize). */
async function planes(
  data: Uint8Array,
  width: number,
  height: number,
  channels: 1 | 3,
  work: Work,
  grey = false,
): Promise<Float32Array[]> {
  let pipeline = sharp(data, { raw: { width, height, channels } })
  if (work.scale < 1) pipeline = pipeline.resize(work.ww, work.wh, { fit: 'fill', kernel: 'linear' })
  // A 1-channel raw comes back as 3 channels unless told it is greyscale (STACK.md).
  if (channels === 1 || grey) pipeline = pipeline.toColourspace('b-w')
  const { data: out, info } = await pipeline.raw().toBuffer({ resolveWithObject: true })
  return toPlanes(out, info.width * info.height, info.channels)
}

/** Interleaved 8-bit pixels (`n` of `channels`) → planar floats in 0..1. */
function toPlanes(data: Uint8Array, n: number, channels: number): Float32Array[] {
  const result = Array.from({ length: channels }, () => new Float32Array(n))
  for (let i = 0, k = 0; i < n; i++) for (let c = 0; c < channels; c++) result[c][i] = data[k++] / 255
  return result
}

/** For output pixel (x, y) of a full-size image: the four working-grid taps and weights (half-pixel centred). */
class Sampler {
  readonly x0: Int32Array
  readonly x1: Int32Array
  readonly fx: Float32Array
  readonly y0: Int32Array
  readonly y1: Int32Array
  readonly fy: Float32Array
  constructor(
    width: number,
    height: number,
    readonly ww: number,
    wh: number,
  ) {
    const axis = (n: number, m: number) => {
      const lo = new Int32Array(n)
      const hi = new Int32Array(n)
      const f = new Float32Array(n)
      for (let i = 0; i < n; i++) {
        const s = Math.min(Math.max((i + 0.5) * (m / n) - 0.5, 0), m - 1)
        lo[i] = Math.floor(s)
        hi[i] = Math.min(lo[i] + 1, m - 1)
        f[i] = s - lo[i]
      }
      return [lo, hi, f] as const
    }
    ;[this.x0, this.x1, this.fx] = axis(width, ww)
    ;[this.y0, this.y1, this.fy] = axis(height, wh)
  }
  at(src: Float32Array, x: number, y: number): number {
    const r0 = this.y0[y] * this.ww
    const r1 = this.y1[y] * this.ww
    const fx = this.fx[x]
    const top = src[r0 + this.x0[x]] * (1 - fx) + src[r0 + this.x1[x]] * fx
    const bottom = src[r1 + this.x0[x]] * (1 - fx) + src[r1 + this.x1[x]] * fx
    return top + (bottom - top) * this.fy[y]
  }
}

const defaultRadius = (width: number, height: number) =>
  Math.max(REFINE_DEFAULTS.modelPixels, (REFINE_DEFAULTS.modelPixels * Math.max(width, height)) / 1024)

/**
 * Refines `mask` along the edges of `image` (same size).
 * @example const refined = await refineMask(image, mask);
 */
export async function refineMask(
  image: RgbImage,
  mask: Mask,
  {
    radius,
    eps = REFINE_DEFAULTS.eps,
    maxWorkPixels = REFINE_DEFAULTS.maxWorkPixels,
    guide = 'colour',
  }: RefineOptions = {},
): Promise<Mask> {
  const { width, height } = image
  const work = workSize(width, height, maxWorkPixels)
  const { ww, wh } = work
  const r = Math.max(1, Math.round((radius ?? defaultRadius(width, height)) * work.scale))
  const n = ww * wh
  const [p] = await planes(mask.data, width, height, 1, work)
  const I = await planes(image.data, width, height, 3, work, guide === 'grey')
  const tmp = new Float32Array(n)
  const mean = (src: Float32Array) => boxMean(src, ww, wh, r, new Float32Array(n), tmp)
  const product = (a: Float32Array, b: Float32Array) => {
    const out = new Float32Array(n)
    for (let i = 0; i < n; i++) out[i] = a[i] * b[i]
    return out
  }
  const meanP = mean(p)
  // Per window: a = (Σ + εU)⁻¹ cov(I, p), b = mean(p) − a · mean(I).
  const A = I.map(() => new Float32Array(n))
  const B = new Float32Array(n)
  if (I.length === 1) {
    const corrIp = mean(product(I[0], p))
    const corrII = mean(product(I[0], I[0]))
    const meanI = mean(I[0])
    for (let i = 0; i < n; i++) {
      const m = meanI[i]
      A[0][i] = (corrIp[i] - m * meanP[i]) / (corrII[i] - m * m + eps)
      B[i] = meanP[i] - A[0][i] * m
    }
  } else {
    const [R, G, Bl] = I
    const windows = colourWindows(I, mean)
    const [mr, mg, mb] = windows.mu
    const rp = mean(product(R, p))
    const gp = mean(product(G, p))
    const bp = mean(product(Bl, p))
    const inv = new Float64Array(6)
    for (let i = 0; i < n; i++) {
      const cr = rp[i] - mr[i] * meanP[i]
      const cg = gp[i] - mg[i] * meanP[i]
      const cb = bp[i] - mb[i] * meanP[i]
      invertCovariance(windows, i, eps, inv)
      const ar = inv[0] * cr + inv[1] * cg + inv[2] * cb
      const ag = inv[1] * cr + inv[3] * cg + inv[4] * cb
      const ab = inv[2] * cr + inv[4] * cg + inv[5] * cb
      A[0][i] = ar
      A[1][i] = ag
      A[2][i] = ab
      B[i] = meanP[i] - ar * mr[i] - ag * mg[i] - ab * mb[i]
    }
  }
  const meanA = A.map(mean)
  const meanB = mean(B)

  // Apply at full size, only where the model was unsure: certain pixels stay, so no halo spreads outward.
  const sampler = new Sampler(width, height, ww, wh)
  const src = image.data
  const out = new Uint8Array(mask.data)
  const colour = meanA.length === 3
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      const m = out[i]
      if (m === 0 || m === 255) continue
      const k = i * 3
      let q = sampler.at(meanB, x, y)
      if (colour) {
        q +=
          sampler.at(meanA[0], x, y) * (src[k] / 255) +
          sampler.at(meanA[1], x, y) * (src[k + 1] / 255) +
          sampler.at(meanA[2], x, y) * (src[k + 2] / 255)
      } else {
        // Rec. 601 luma, as libvips' b-w conversion of sRGB (close enough at the guide's precision).
        q += sampler.at(meanA[0], x, y) * ((0.299 * src[k] + 0.587 * src[k + 1] + 0.114 * src[k + 2]) / 255)
      }
      out[i] = Math.round(Math.min(1, Math.max(0, q)) * 255)
    }
  }
  return { data: out, width, height }
}

/**
 * Foreground colour for the edge pixels of a cutout (0 < alpha < 255) by blur fusion: local
 * foreground and background colours are alpha-weighted window means, and each edge pixel's colour
 * is corrected by what its alpha says the background contributed. Pixels with alpha 0 or 255 keep
 * their colour. Returns a new image (decontaminateEdges: the edge pixels' colours alone).
 * One narrow round (window long side / 300 working pixels) by default: Forte & Pitié's wide first
 * round (long side / 20) drags far-away foreground colours into the edge and measured worse with
 * the real model's masks (bench/quality-synthetic.ts; docs/quality.md); `rounds: 2` keeps it available.
 * @example const clean = await decontaminate(image, mask);
 */
export async function decontaminate(
  image: RgbImage,
  mask: Mask,
  options: DecontaminateOptions = {},
): Promise<RgbImage> {
  const { index, rgb } = await decontaminateEdges(image, mask, options)
  const out = new Uint8Array(image.data)
  for (let e = 0; e < index.length; e++) {
    const i = index[e] * 3
    out[i] = rgb[e * 3]
    out[i + 1] = rgb[e * 3 + 1]
    out[i + 2] = rgb[e * 3 + 2]
  }
  return { data: out, width: image.width, height: image.height, channels: 3 }
}

export interface DecontaminateOptions {
  maxWorkPixels?: number
  wideDivisor?: number
  narrowDivisor?: number
  rounds?: 1 | 2
  /**
   * `image` already scaled to the working size as planes() scales it (libvips linear, `fit:
   * fill`; `fast`'s finish has it): used instead of scaling again. Ignored at another size.
   */
  workPhoto?: RgbImage
}

/** A cutout's edge pixels (0 < alpha < 255, ascending indices) and their new RGB, 3 bytes each. */
export interface EdgeColours {
  index: Int32Array
  rgb: Uint8Array
}

/**
 * decontaminate's colours of the edge pixels alone, without a copy of the whole photo (at 12 MP
 * that copy is 36 MB of fresh pages): composeCutout lays them over the photo.
 */
export async function decontaminateEdges(
  image: RgbImage,
  mask: Mask,
  {
    maxWorkPixels = REFINE_DEFAULTS.maxWorkPixels,
    wideDivisor = 20,
    narrowDivisor = 300,
    rounds = 1,
    workPhoto,
  }: DecontaminateOptions = {},
): Promise<EdgeColours> {
  const { width, height } = image
  const work = workSize(width, height, maxWorkPixels)
  const { ww, wh } = work
  const n = ww * wh
  const [alpha] = await planes(mask.data, width, height, 1, work)
  const given = workPhoto && workPhoto.width === ww && workPhoto.height === wh ? workPhoto : undefined
  const I = given ? toPlanes(given.data, n, 3) : await planes(image.data, width, height, 3, work)
  const tmp = new Float32Array(n)
  const blur = (src: Float32Array, r: number) => boxMean(src, ww, wh, r, new Float32Array(n), tmp)

  /** One round: blurred F and B from the current estimates F, B. */
  const round = (F: Float32Array[], Bg: Float32Array[], r: number) => {
    const wa = new Float32Array(n)
    const wb = new Float32Array(n)
    for (let i = 0; i < n; i++) {
      wa[i] = alpha[i]
      wb[i] = 1 - alpha[i]
    }
    const ba = blur(wa, r)
    const bb = blur(wb, r)
    const fOut: Float32Array[] = []
    const bOut: Float32Array[] = []
    for (let c = 0; c < 3; c++) {
      const fa = new Float32Array(n)
      const b1a = new Float32Array(n)
      for (let i = 0; i < n; i++) {
        fa[i] = F[c][i] * alpha[i]
        b1a[i] = Bg[c][i] * (1 - alpha[i])
      }
      const bf = blur(fa, r)
      const bbg = blur(b1a, r)
      for (let i = 0; i < n; i++) {
        bf[i] /= ba[i] + 1e-5
        bbg[i] /= bb[i] + 1e-5
      }
      fOut.push(bf)
      bOut.push(bbg)
    }
    return { F: fOut, B: bOut }
  }
  const corrected = (blurF: Float32Array[], blurB: Float32Array[]) =>
    blurF.map((bf, c) => {
      const out = new Float32Array(n)
      for (let i = 0; i < n; i++) {
        const a = alpha[i]
        out[i] = Math.min(1, Math.max(0, bf[i] + a * (I[c][i] - a * bf[i] - (1 - a) * blurB[c][i])))
      }
      return out
    })
  // Forte & Pitié use a wide window (90 px at ~1 MP) then a narrow one (6 px).
  const wide = Math.max(4, Math.round(Math.max(ww, wh) / wideDivisor))
  const narrow = Math.max(2, Math.round(Math.max(ww, wh) / narrowDivisor))
  const first = round(I, I, rounds === 2 ? wide : narrow)
  const second = rounds === 2 ? round(corrected(first.F, first.B), first.B, narrow) : first

  const sampler = new Sampler(width, height, ww, wh)
  const src = image.data
  const a8 = mask.data
  let count = 0
  for (let i = 0; i < a8.length; i++) if (a8[i] !== 0 && a8[i] !== 255) count++
  const index = new Int32Array(count)
  const rgb = new Uint8Array(count * 3)
  for (let y = 0, e = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      const m = a8[i]
      if (m === 0 || m === 255) continue
      const a = m / 255
      index[e] = i
      for (let c = 0; c < 3; c++) {
        const f = sampler.at(second.F[c], x, y)
        const b = sampler.at(second.B[c], x, y)
        const v = f + a * (src[i * 3 + c] / 255 - a * f - (1 - a) * b)
        rgb[e * 3 + c] = Math.round(Math.min(1, Math.max(0, v)) * 255)
      }
      e++
    }
  }
  return { index, rgb }
}
