/**
 * @module
 * Closed-form alpha matting (Levin, Lischinski & Weiss, "A Closed-Form Solution to Natural Image
 * Matting", PAMI 2008) inside a trimap's unknown band, solved with Jacobi-preconditioned conjugate
 * gradients as pymatting does (Germer et al., "PyMatting", JOSS 2020).
 * The matting Laplacian is never built: He, Sun & Tang ("Fast Matting Using Large Kernel Matting
 * Laplacian Matrices", CVPR 2010) show L·p = |w|·(p − q), q being the guided filter of p with the
 * photo as guide and ε/|w| as regularisation, so each product is a few box filters (refine.ts's
 * boxMean) over the band's bounding box.
 * We minimise αᵀLα + λ Σ_known (α − α₀)² + μ Σ_unknown (α − m)²: known pixels (the model's sure
 * ones) are held, and a weak pull towards the model's own soft value m keeps the solve from
 * drifting where the photo's colours say nothing (a flat background matching the subject).
 */
import { colourWindows, invertCovariance } from './colour-window.js'
import { boxMean } from './refine.js'
import type { Mask, RgbImage } from './types.js'

export interface MattingOptions {
  /** Window radius (1: Levin's 3×3 windows). */
  radius: number
  /** Levin's ε: larger smooths alpha more where the window's colours are flat. */
  eps: number
  /** Weight holding the trimap's known pixels. */
  knownWeight: number
  /** Weight pulling unknown pixels towards the model's soft mask. */
  priorWeight: number
  /** Mask values (0..255) strictly between these are unsure; the unknown band is them widened by `widen` px. */
  low: number
  high: number
  widen: number
  /** Conjugate-gradient iterations at most, and the residual (relative to the first) that stops them earlier. */
  iterations: number
  tolerance: number
}

/** Measured on ../shared/gt with bench/high-tuning-gt.ts (removed since: `git show e9fe91c:bench/high-tuning-gt.ts`; docs/quality.md). */
export const MATTING_DEFAULTS: MattingOptions = {
  radius: 1,
  eps: 1e-6,
  knownWeight: 100,
  priorWeight: 0.05,
  low: 8,
  high: 247,
  widen: 4,
  iterations: 20,
  tolerance: 1e-4,
}

/** Bounding box (inclusive-exclusive) of the set pixels of `on`, grown by `pad`, or null when empty. */
export function bounds(on: Uint8Array, width: number, height: number, pad: number) {
  let [x0, y0, x1, y1] = [width, height, -1, -1]
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (on[y * width + x]) {
        if (x < x0) x0 = x
        if (x > x1) x1 = x
        if (y < y0) y0 = y
        if (y > y1) y1 = y
      }
  if (x1 < 0) return null
  return {
    x0: Math.max(0, x0 - pad),
    y0: Math.max(0, y0 - pad),
    x1: Math.min(width, x1 + pad + 1),
    y1: Math.min(height, y1 + pad + 1),
  }
}

/** The unknown band: unsure mask pixels widened by a (2·widen+1)² square. */
export function unknownBand(mask: Mask, { low, high, widen }: Pick<MattingOptions, 'low' | 'high' | 'widen'>) {
  const { width, height, data } = mask
  const seed = new Float32Array(data.length)
  for (let i = 0; i < data.length; i++) seed[i] = data[i] > low && data[i] < high ? 1 : 0
  const spread = boxMean(seed, width, height, widen)
  const out = new Uint8Array(data.length)
  for (let i = 0; i < data.length; i++) out[i] = spread[i] > 0 ? 1 : 0
  return out
}

/**
 * The window statistics that do not depend on α: per window k, μ_k and Δ_k⁻¹ = (Σ_k + ε/|w|·U)⁻¹
 * (6 entries of the symmetric inverse), computed once per solve.
 */
function windowStats(I: Float64Array[], w: number, h: number, r: number, eps: number) {
  const n = w * h
  const tmp = new Float64Array(n)
  // Float64 here: Σ_k = E[IIᵀ] − μμᵀ cancels to ~ε on flat windows, below float32's precision.
  const mean = (src: Float64Array) => boxMean(src, w, h, r, new Float64Array(n), tmp)
  const windows = colourWindows(I, mean)
  const e = eps / (2 * r + 1) ** 2
  const inv = Array.from({ length: 6 }, () => new Float64Array(n))
  const entries = new Float64Array(6)
  for (let i = 0; i < n; i++) {
    invertCovariance(windows, i, e, entries)
    for (let k = 0; k < 6; k++) inv[k][i] = entries[k]
  }
  return { mu: windows.mu, inv }
}

/**
 * The matting Laplacian (divided by |w|) as an operator: p ↦ p − q, q the guided filter of p, and
 * its diagonal for the Jacobi preconditioner.
 */
function laplacian(I: Float64Array[], w: number, h: number, r: number, eps: number) {
  const n = w * h
  const size = (2 * r + 1) ** 2
  const stats = windowStats(I, w, h, r, eps)
  const { mu, inv } = stats
  // The products read float32 copies: half the memory traffic, and their precision is enough once Δ⁻¹ is formed.
  const [I32, mu32, inv32] = [I, mu, inv].map((xs) => xs.map((x) => Float32Array.from(x)))
  // Buffers reused by every product: a solve runs tens of them over the band's bounding box.
  const tmp = new Float32Array(n)
  const buf = new Float32Array(n)
  const planes = (k: number) => Array.from({ length: k }, () => new Float32Array(n))
  const [mp, mb, b] = planes(3)
  const cov = planes(3)
  const a = planes(3)
  const ma = planes(3)
  const mean = (src: Float32Array, out = new Float32Array(n)) => boxMean(src, w, h, r, out, tmp)
  const apply = (p: Float32Array, out: Float32Array) => {
    mean(p, mp)
    for (let c = 0; c < 3; c++) {
      const Ic = I32[c]
      for (let i = 0; i < n; i++) buf[i] = Ic[i] * p[i]
      mean(buf, cov[c])
    }
    for (let i = 0; i < n; i++) {
      const cr = cov[0][i] - mu32[0][i] * mp[i]
      const cg = cov[1][i] - mu32[1][i] * mp[i]
      const cb = cov[2][i] - mu32[2][i] * mp[i]
      const ar = inv32[0][i] * cr + inv32[1][i] * cg + inv32[2][i] * cb
      const ag = inv32[1][i] * cr + inv32[3][i] * cg + inv32[4][i] * cb
      const ab = inv32[2][i] * cr + inv32[4][i] * cg + inv32[5][i] * cb
      a[0][i] = ar
      a[1][i] = ag
      a[2][i] = ab
      b[i] = mp[i] - ar * mu32[0][i] - ag * mu32[1][i] - ab * mu32[2][i]
    }
    for (let c = 0; c < 3; c++) mean(a[c], ma[c])
    mean(b, mb)
    for (let i = 0; i < n; i++)
      out[i] = p[i] - (ma[0][i] * I32[0][i] + ma[1][i] * I32[1][i] + ma[2][i] * I32[2][i] + mb[i])
    return out
  }
  // diag = 1 − (1/|w|)·(1 + mean_k (I_i − μ_k)ᵀ Δ_k⁻¹ (I_i − μ_k)), the mean over the windows holding i.
  const tmp64 = new Float64Array(n)
  const mean64 = (src: Float64Array) => boxMean(src, w, h, r, new Float64Array(n), tmp64)
  const m1 = inv.map(mean64)
  const dmu = [0, 1, 2].map((c) => {
    const [x, y, z] = c === 0 ? [0, 1, 2] : c === 1 ? [1, 3, 4] : [2, 4, 5]
    return mean64(inv[x].map((v, i) => v * mu[0][i] + inv[y][i] * mu[1][i] + inv[z][i] * mu[2][i]))
  })
  const quad = mean64(
    mu[0].map((_, i) => {
      const [r0, g0, b0] = [mu[0][i], mu[1][i], mu[2][i]]
      return (
        inv[0][i] * r0 * r0 +
        inv[3][i] * g0 * g0 +
        inv[5][i] * b0 * b0 +
        2 * (inv[1][i] * r0 * g0 + inv[2][i] * r0 * b0 + inv[4][i] * g0 * b0)
      )
    }),
  )
  const diag = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    const [x, y, z] = [I[0][i], I[1][i], I[2][i]]
    const xMx =
      m1[0][i] * x * x +
      m1[3][i] * y * y +
      m1[5][i] * z * z +
      2 * (m1[1][i] * x * y + m1[2][i] * x * z + m1[4][i] * y * z)
    const q = xMx - 2 * (x * dmu[0][i] + y * dmu[1][i] + z * dmu[2][i]) + quad[i]
    diag[i] = Math.max(1e-4, 1 - (1 + q) / size)
  }
  return { apply, diag }
}

/**
 * Solves (L + Λ) α = Λ·target by Jacobi-preconditioned conjugate gradients from `x` (in place).
 * @returns the iterations it took
 */
export function solvePcg(
  apply: (p: Float32Array, out: Float32Array) => Float32Array,
  diag: Float32Array,
  lambda: Float32Array,
  target: Float32Array,
  x: Float32Array,
  iterations: number,
  tolerance: number,
): number {
  const n = x.length
  const A = (p: Float32Array, out: Float32Array) => {
    apply(p, out)
    for (let i = 0; i < n; i++) out[i] += lambda[i] * p[i]
    return out
  }
  const r = new Float32Array(n)
  const z = new Float32Array(n)
  const p = new Float32Array(n)
  const Ap = new Float32Array(n)
  A(x, Ap)
  // Relative to the first residual: the held pixels' large λ·target would make any residual look small.
  let r0 = 0
  for (let i = 0; i < n; i++) {
    r[i] = lambda[i] * target[i] - Ap[i]
    r0 += r[i] * r[i]
  }
  r0 = Math.sqrt(r0) || 1
  let rz = 0
  for (let i = 0; i < n; i++) {
    z[i] = r[i] / (diag[i] + lambda[i])
    p[i] = z[i]
    rz += r[i] * z[i]
  }
  for (let k = 0; k < iterations; k++) {
    A(p, Ap)
    let pAp = 0
    for (let i = 0; i < n; i++) pAp += p[i] * Ap[i]
    if (pAp <= 0) return k
    const step = rz / pAp
    let rNorm = 0
    for (let i = 0; i < n; i++) {
      x[i] += step * p[i]
      r[i] -= step * Ap[i]
      rNorm += r[i] * r[i]
    }
    if (Math.sqrt(rNorm) / r0 < tolerance) return k + 1
    let rzNext = 0
    for (let i = 0; i < n; i++) {
      z[i] = r[i] / (diag[i] + lambda[i])
      rzNext += r[i] * z[i]
    }
    const beta = rzNext / rz
    rz = rzNext
    for (let i = 0; i < n; i++) p[i] = z[i] + beta * p[i]
  }
  return iterations
}

/** A box of the photo (inclusive-exclusive), as bounds() gives it. */
export interface Box {
  x0: number
  y0: number
  x1: number
  y1: number
}

/**
 * Minimises αᵀLα + Σ λ(α − target)² over `box` of `image` (target and λ given per box pixel, row
 * by row), from α = target: the matting solve for any field a photo's colours should shape (the
 * faint pass's raise weight, raise-edge.ts, as well as a mask's band).
 */
export function solveInBox(
  image: RgbImage,
  box: Box,
  target: Float32Array,
  lambda: Float32Array,
  o: Pick<MattingOptions, 'radius' | 'eps' | 'iterations' | 'tolerance'>,
): Float32Array {
  const { width } = image
  const w = box.x1 - box.x0
  const h = box.y1 - box.y0
  const n = w * h
  const I = [0, 1, 2].map(() => new Float64Array(n))
  for (let y = 0; y < h; y++)
    for (let xx = 0; xx < w; xx++) {
      const i = (y + box.y0) * width + xx + box.x0
      for (let c = 0; c < 3; c++) I[c][y * w + xx] = image.data[i * 3 + c] / 255
    }
  const x = Float32Array.from(target)
  const { apply, diag } = laplacian(I, w, h, o.radius, o.eps)
  solvePcg(apply, diag, lambda, target, x, o.iterations, o.tolerance)
  return x
}

/**
 * Re-estimates `mask`'s unsure band from the photo's colours by closed-form matting; pixels outside
 * the band keep their value. Same size as `image`.
 * @example const matte = mattingSolve(image, mask)
 */
export function mattingSolve(image: RgbImage, mask: Mask, options: Partial<MattingOptions> = {}): Mask {
  const o = { ...MATTING_DEFAULTS, ...options }
  const { width, height } = image
  const band = unknownBand(mask, o)
  const box = bounds(band, width, height, 2 * o.radius + 1)
  if (!box) return mask
  const w = box.x1 - box.x0
  const h = box.y1 - box.y0
  const lambda = new Float32Array(w * h)
  const target = new Float32Array(w * h)
  for (let y = 0; y < h; y++)
    for (let xx = 0; xx < w; xx++) {
      const j = y * w + xx
      const i = (y + box.y0) * width + xx + box.x0
      const m = mask.data[i] / 255
      target[j] = band[i] ? m : Math.round(m)
      lambda[j] = band[i] ? o.priorWeight : o.knownWeight
    }
  const x = solveInBox(image, box, target, lambda, o)
  const out = new Uint8Array(mask.data)
  for (let y = 0; y < h; y++)
    for (let xx = 0; xx < w; xx++) {
      const i = (y + box.y0) * width + xx + box.x0
      if (band[i]) out[i] = Math.round(Math.min(1, Math.max(0, x[y * w + xx])) * 255)
    }
  return { data: out, width, height }
}
