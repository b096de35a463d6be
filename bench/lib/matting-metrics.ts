/**
 * The standard alpha-matting metrics (Rhemann et al., "A Perceptually Motivated Online Benchmark for
 * Image Matting", CVPR 2009; the Composition-1k evaluation code of Xu et al., "Deep Image Matting",
 * CVPR 2017), over the whole image or a region (the truth's edge band):
 * - SAD  Σ|α̂ − α|, in thousands (α in 0..1);
 * - MSE  mean (α̂ − α)², × 1000;
 * - gradient error Σ(|∇α̂| − |∇α|)² with σ = 1.4 Gaussian-derivative gradients, in thousands;
 * - connectivity error Σ|φ(α̂) − φ(α)|, in thousands: φ = 1 − d·[d ≥ 0.15], d = α − l, l the last
 *   threshold (steps of 0.1) at which the pixel is still in the largest 8-connected component of
 *   {α̂ ≥ t} ∩ {α ≥ t}: how much of the matte is cut off from the subject.
 */
import type { Composite } from './composites.js'
import { round } from './util.js'

export interface MattingScores {
  sad: number
  mse: number
  grad: number
  conn: number
}

const r3 = (v: number) => Math.round(v * 1000) / 1000

/** Labels the largest 8-connected component of `on` (1 = in it). */
function largestComponent(on: Uint8Array, width: number, height: number): Uint8Array {
  const label = new Int32Array(on.length)
  const stack = new Int32Array(on.length)
  let best = 0
  let bestSize = 0
  let next = 0
  for (let start = 0; start < on.length; start++) {
    if (!on[start] || label[start]) continue
    next++
    let size = 0
    let top = 0
    stack[top++] = start
    label[start] = next
    while (top) {
      const i = stack[--top]
      size++
      const x = i % width
      const y = (i - x) / width
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy
        if (yy < 0 || yy >= height) continue
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx
          if (xx < 0 || xx >= width) continue
          const j = yy * width + xx
          if (on[j] && !label[j]) {
            label[j] = next
            stack[top++] = j
          }
        }
      }
    }
    if (size > bestSize) [best, bestSize] = [next, size]
  }
  const out = new Uint8Array(on.length)
  for (let i = 0; i < on.length; i++) out[i] = label[i] === best && best ? 1 : 0
  return out
}

/** φ of the connectivity error for `est` and `truth` (step 0.1, d threshold 0.15). */
function connectivityPhi(est: Float32Array, truth: Float32Array, width: number, height: number) {
  const l = new Float32Array(est.length).fill(-1)
  const on = new Uint8Array(est.length)
  for (let k = 1; k <= 10; k++) {
    const t = k / 10
    for (let i = 0; i < on.length; i++) on[i] = est[i] >= t && truth[i] >= t ? 1 : 0
    const omega = largestComponent(on, width, height)
    for (let i = 0; i < l.length; i++) if (l[i] === -1 && !omega[i]) l[i] = (k - 1) / 10
  }
  const phi = (a: Float32Array) =>
    a.map((v, i) => {
      const d = v - (l[i] === -1 ? 1 : l[i])
      return 1 - (d >= 0.15 ? d : 0)
    })
  return [phi(est), phi(truth)] as const
}

/**
 * The four metrics of `est` against `truth` (both α in 0..1, `width`×`height`), over `region`
 * (1 = counted; default the whole image).
 * @example matting(est, truth, w, h).sad // in thousands
 */
export function matting(
  est: Float32Array,
  truth: Float32Array,
  width: number,
  height: number,
  region?: Uint8Array,
): MattingScores {
  const [ge, gt] = [gradientMagnitude(est, width, height), gradientMagnitude(truth, width, height)]
  const [pe, pt] = connectivityPhi(est, truth, width, height)
  let sad = 0
  let se = 0
  let grad = 0
  let conn = 0
  let n = 0
  for (let i = 0; i < est.length; i++) {
    if (region && !region[i]) continue
    const d = est[i] - truth[i]
    sad += Math.abs(d)
    se += d * d
    grad += (ge[i] - gt[i]) ** 2
    conn += Math.abs(pe[i] - pt[i])
    n++
  }
  return { sad: r3(sad / 1000), mse: r3((1000 * se) / Math.max(1, n)), grad: r3(grad / 1000), conn: r3(conn / 1000) }
}

/**
 * The truth's edge band: every pixel within `radius` (Chebyshev) of a pixel whose truth differs
 * from a neighbour's, so a binary truth (DAVIS) has a band too, and a soft matte's whole transition is in it.
 */
export function edgeBand(truth: Float32Array, width: number, height: number, radius: number): Uint8Array {
  const edge = new Uint8Array(truth.length)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      const v = truth[i]
      if (v > 0 && v < 1) edge[i] = 1
      else if ((x + 1 < width && truth[i + 1] !== v) || (y + 1 < height && truth[i + width] !== v)) edge[i] = 1
    }
  }
  // Dilate by a (2r+1)² square: separable running max.
  const dilate1d = (src: Uint8Array, horizontal: boolean) => {
    const out = new Uint8Array(src.length)
    const [outer, inner] = horizontal ? [height, width] : [width, height]
    for (let o = 0; o < outer; o++) {
      const at = (k: number) => (horizontal ? o * width + k : k * width + o)
      // Forward and backward passes: distance to the nearest set pixel on either side.
      let prev = -Infinity
      for (let k = 0; k < inner; k++) {
        if (src[at(k)]) prev = k
        if (k - prev <= radius) out[at(k)] = 1
      }
      let nextSet = Infinity
      for (let k = inner - 1; k >= 0; k--) {
        if (src[at(k)]) nextSet = k
        if (nextSet - k <= radius) out[at(k)] = 1
      }
    }
    return out
  }
  return dilate1d(dilate1d(edge, true), false)
}

/** Separable Gaussian blur of a float plane (σ in pixels, kernel to ±3σ, clamped borders). */
function gaussian(src: Float32Array, width: number, height: number, sigma: number): Float32Array {
  const r = Math.ceil(3 * sigma)
  const k = new Float32Array(2 * r + 1)
  let sum = 0
  for (let i = -r; i <= r; i++) sum += k[i + r] = Math.exp(-(i * i) / (2 * sigma * sigma))
  for (let i = 0; i < k.length; i++) k[i] /= sum
  const tmp = new Float32Array(src.length)
  const out = new Float32Array(src.length)
  for (let y = 0; y < height; y++) {
    const row = y * width
    for (let x = 0; x < width; x++) {
      let v = 0
      for (let i = -r; i <= r; i++) v += k[i + r] * src[row + Math.min(width - 1, Math.max(0, x + i))]
      tmp[row + x] = v
    }
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let v = 0
      for (let i = -r; i <= r; i++) v += k[i + r] * tmp[Math.min(height - 1, Math.max(0, y + i)) * width + x]
      out[y * width + x] = v
    }
  }
  return out
}

/** Gaussian-derivative gradient magnitude (σ = 1.4, as the matting benchmark's gradient error). */
export function gradientMagnitude(alpha: Float32Array, width: number, height: number): Float32Array {
  const s = gaussian(alpha, width, height, 1.4)
  const g = new Float32Array(width * height)
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x
      const gx = (s[i + 1] - s[i - 1]) / 2
      const gy = (s[i + width] - s[i - width]) / 2
      g[i] = Math.sqrt(gx * gx + gy * gy)
    }
  }
  return g
}

/**
 * Edge colour error: the mean |F̂ − F| of a cutout's RGB (`rgba`, 0..255, 4 channels) against the
 * true foreground over the true edge band (0.02 < α < 0.98), weighted by α, in 8-bit units.
 */
export function edgeColourError(c: Composite, rgba: ArrayLike<number>): number {
  let err = 0
  let weight = 0
  for (let p = 0; p < c.alpha.length; p++) {
    const a = c.alpha[p]
    if (a <= 0.02 || a >= 0.98) continue
    for (let ch = 0; ch < 3; ch++) err += a * Math.abs(rgba[p * 4 + ch] - c.fg[p * 3 + ch])
    weight += 3 * a
  }
  return round(err / weight, 2)
}
