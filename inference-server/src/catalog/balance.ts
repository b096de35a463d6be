/**
 * Neutral exposure and white balance for the subject (DESIGN.md §3 Catalog images), measured on
 * and applied to the subject's own pixels only, as one lookup table per channel (monotone: the
 * product's colours keep their order and no pixel is repainted from its neighbours). Both
 * corrections are bounded so they cannot make a photo worse than a small nudge:
 * - white balance: the cast of the subject's near-grey pixels (a white label, a steel rim) is
 *   removed, by at most ±8 % per channel, and only when at least 5 % of the subject is near-grey;
 *   a red product with no grey in it is left as it is rather than turned grey (grey-world would);
 * - exposure: the subject's bright end (99th percentile of luma) is lifted towards 235, by at
 *   most 15 %, and never darkened; at most 1 % of pixels can reach white.
 */

/** Per-channel gains (white balance × exposure). */
export interface Balance {
  gains: [number, number, number]
  /** The white-balance part alone, and the exposure factor, for diagnostics. */
  whiteBalance: [number, number, number]
  exposure: number
}

/** Subject pixels count from this alpha: the interior, not the edge that mixes in the old background. */
const INTERIOR_ALPHA = 250
const MAX_WB = 0.08
const MIN_GREY_SHARE = 0.05
/** (max − min) / max of a near-grey pixel; a warm or cool cast of up to ~20 % still counts. */
const GREY_CHROMA = 0.2
const MAX_EXPOSURE = 1.15
const EXPOSURE_TARGET = 235

const luma = (r: number, g: number, b: number) => 0.2126 * r + 0.7152 * g + 0.0722 * b
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

/** The grey pixels' mean made neutral, within ±8 %; no change without enough of them. */
function measureWhiteBalance(rgb: Uint8Array, alpha: Uint8Array): [number, number, number] {
  let interior = 0
  let grey = 0
  const sum = [0, 0, 0]
  for (let k = 0, i = 0; k < alpha.length; k++, i += 3) {
    if (alpha[k] < INTERIOR_ALPHA) continue
    interior++
    const r = rgb[i]
    const g = rgb[i + 1]
    const b = rgb[i + 2]
    const max = Math.max(r, g, b)
    const y = luma(r, g, b)
    // Too dark or clipped pixels say little about the light's colour.
    if (y < 40 || max > 250 || (max - Math.min(r, g, b)) / max > GREY_CHROMA) continue
    grey++
    sum[0] += r
    sum[1] += g
    sum[2] += b
  }
  if (!interior || grey / interior < MIN_GREY_SHARE) return [1, 1, 1]
  const mean = (sum[0] + sum[1] + sum[2]) / 3 / grey
  return sum.map((s) => clamp(mean / (s / grey), 1 - MAX_WB, 1 + MAX_WB)) as [number, number, number]
}

/** The lift that brings the subject's 99th-percentile luma to 235, between 1 and 1.15. */
function measureExposure(rgb: Uint8Array, alpha: Uint8Array, wb: [number, number, number]): number {
  const histogram = new Uint32Array(256)
  let count = 0
  for (let k = 0, i = 0; k < alpha.length; k++, i += 3) {
    if (alpha[k] < INTERIOR_ALPHA) continue
    const y = luma(rgb[i] * wb[0], rgb[i + 1] * wb[1], rgb[i + 2] * wb[2])
    histogram[Math.min(255, Math.round(y))]++
    count++
  }
  if (!count) return 1
  let seen = 0
  let p99 = 255
  for (let v = 0; v < 256; v++) {
    seen += histogram[v]
    if (seen >= count * 0.99) {
      p99 = v
      break
    }
  }
  return p99 ? clamp(EXPOSURE_TARGET / p99, 1, MAX_EXPOSURE) : 1
}

/**
 * Measures the correction on the subject's interior pixels (alpha ≥ 250).
 * @example const balance = measureBalance(cutout.rgb, cutout.alpha)
 */
export function measureBalance(rgb: Uint8Array, alpha: Uint8Array): Balance {
  const whiteBalance = measureWhiteBalance(rgb, alpha)
  const exposure = measureExposure(rgb, alpha, whiteBalance)
  return { whiteBalance, exposure, gains: whiteBalance.map((g) => g * exposure) as [number, number, number] }
}

/** Applies the gains through one 256-entry table per channel; returns new pixels. */
export function applyBalance(rgb: Uint8Array, { gains }: Balance): Uint8Array {
  const tables = gains.map((g) => Uint8Array.from({ length: 256 }, (_, v) => clamp(Math.round(v * g), 0, 255)))
  const out = new Uint8Array(rgb.length)
  for (let i = 0; i < rgb.length; i += 3) {
    out[i] = tables[0][rgb[i]]
    out[i + 1] = tables[1][rgb[i + 1]]
    out[i + 2] = tables[2][rgb[i + 2]]
  }
  return out
}
