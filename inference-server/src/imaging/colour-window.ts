/**
 * @module
 * The colour statistics of a guided filter's windows (He, Sun & Tang 2010, §3.5), shared by the
 * edge refinement (refine.ts) and the matting Laplacian (matting.ts): per window k, the colour
 * means μ_k and the inverse of the regularised colour covariance, (Σ_k + e·U)⁻¹.
 */

type Plane = Float32Array | Float64Array

/** Each window's colour means and the means of the six channel products (rr, rg, rb, gg, gb, bb). */
export interface ColourWindows<P extends Plane> {
  mu: P[]
  products: P[]
}

/**
 * The window means of a 3-plane guide, in its planes' precision. `mean` is the window's box mean
 * (refine.ts `boxMean` at the caller's radius).
 */
export function colourWindows<P extends Plane>(I: P[], mean: (src: P) => P): ColourWindows<P> {
  const product = (a: P, b: P) => {
    const out = a.slice() as P
    for (let i = 0; i < out.length; i++) out[i] *= b[i]
    return out
  }
  const [R, G, B] = I
  const pairs: [P, P][] = [
    [R, R],
    [R, G],
    [R, B],
    [G, G],
    [G, B],
    [B, B],
  ]
  return { mu: I.map(mean), products: pairs.map(([a, b]) => mean(product(a, b))) }
}

/**
 * Window i's (Σ + e·U)⁻¹, Σ = E[IIᵀ] − μμᵀ, into `out` as the six entries of the symmetric inverse
 * (11, 12, 13, 22, 23, 33), by cofactors. In doubles whatever the planes: on a flat window Σ
 * cancels to about e.
 */
export function invertCovariance(w: ColourWindows<Plane>, i: number, e: number, out: Float64Array): void {
  const { mu, products: p } = w
  const [mr, mg, mb] = [mu[0][i], mu[1][i], mu[2][i]]
  const s11 = p[0][i] - mr * mr + e
  const s12 = p[1][i] - mr * mg
  const s13 = p[2][i] - mr * mb
  const s22 = p[3][i] - mg * mg + e
  const s23 = p[4][i] - mg * mb
  const s33 = p[5][i] - mb * mb + e
  const i11 = s22 * s33 - s23 * s23
  const i12 = s13 * s23 - s12 * s33
  const i13 = s12 * s23 - s13 * s22
  const i22 = s11 * s33 - s13 * s13
  const i23 = s13 * s12 - s11 * s23
  const i33 = s11 * s22 - s12 * s12
  const det = s11 * i11 + s12 * i12 + s13 * i13
  out[0] = i11 / det
  out[1] = i12 / det
  out[2] = i13 / det
  out[3] = i22 / det
  out[4] = i23 / det
  out[5] = i33 / det
}
