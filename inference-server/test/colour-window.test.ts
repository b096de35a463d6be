/**
 * The guided filter's colour window statistics (imaging/colour-window.ts), shared by refine.ts and
 * matting.ts, on a small made image: each window's inverse covariance, times the covariance
 * counted pixel by pixel, is the identity.
 */
import { describe, expect, it } from 'vitest'
import { colourWindows, invertCovariance } from '../src/imaging/colour-window.js'
import { boxMean } from '../src/imaging/refine.js'

const W = 9
const H = 7
const R = 1
const E = 1e-3

/** Three colour planes in 0..1 that vary independently (no window is flat or grey). */
function madeImage(): Float64Array[] {
  return [0, 1, 2].map((c) => Float64Array.from({ length: W * H }, (_, i) => (Math.sin(i * (1.3 + c) + c) + 1) / 2))
}

/** Window i's Σ + e·U from its pixels (the window clipped at the borders, as boxMean's is). */
function covarianceByHand(I: Float64Array[], i: number): number[][] {
  const [x0, y0] = [i % W, Math.floor(i / W)]
  const pixels: number[][] = []
  for (let y = Math.max(0, y0 - R); y <= Math.min(H - 1, y0 + R); y++)
    for (let x = Math.max(0, x0 - R); x <= Math.min(W - 1, x0 + R); x++) pixels.push(I.map((p) => p[y * W + x]))
  const mu = [0, 1, 2].map((c) => pixels.reduce((s, px) => s + px[c], 0) / pixels.length)
  return [0, 1, 2].map((a) =>
    [0, 1, 2].map(
      (b) => pixels.reduce((s, px) => s + (px[a] - mu[a]) * (px[b] - mu[b]), 0) / pixels.length + (a === b ? E : 0),
    ),
  )
}

const symmetric = (v: Float64Array) => [
  [v[0], v[1], v[2]],
  [v[1], v[3], v[4]],
  [v[2], v[4], v[5]],
]

describe('colour window statistics', () => {
  it('inverts each window’s regularised colour covariance', () => {
    const I = madeImage()
    const n = W * H
    const windows = colourWindows(I, (src) => boxMean(src, W, H, R, new Float64Array(n), new Float64Array(n)))
    const inv = new Float64Array(6)
    for (let i = 0; i < n; i++) {
      invertCovariance(windows, i, E, inv)
      const S = covarianceByHand(I, i)
      const M = symmetric(inv)
      for (let a = 0; a < 3; a++)
        for (let b = 0; b < 3; b++) {
          const product = M[a][0] * S[0][b] + M[a][1] * S[1][b] + M[a][2] * S[2][b]
          expect(product, `window ${i} (${a},${b})`).toBeCloseTo(a === b ? 1 : 0, 6)
        }
    }
  })

  it('gives the same in float32 planes (refine.ts) as in float64 ones (matting.ts), to float32 precision', () => {
    const I = madeImage()
    const n = W * H
    const mean64 = (src: Float64Array) => boxMean(src, W, H, R, new Float64Array(n), new Float64Array(n))
    const mean32 = (src: Float32Array) => boxMean(src, W, H, R, new Float32Array(n), new Float32Array(n))
    const w64 = colourWindows(I, mean64)
    const w32 = colourWindows(
      I.map((p) => Float32Array.from(p)),
      mean32,
    )
    const [a, b] = [new Float64Array(6), new Float64Array(6)]
    for (let i = 0; i < n; i++) {
      invertCovariance(w64, i, E, a)
      invertCovariance(w32, i, E, b)
      for (let k = 0; k < 6; k++) expect(Math.abs(b[k] - a[k])).toBeLessThan(1e-3 * Math.max(1, Math.abs(a[k])))
    }
  })
})
