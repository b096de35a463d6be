/**
 * The closed-form matting solve (imaging/matting.ts) on made images, no model: a photo that is a
 * true mix αF + (1 − α)B of two colours has its α recovered from a mask that is wrong in the band.
 */
import { describe, expect, it } from 'vitest'
import { mattingSolve, unknownBand } from '../src/imaging/matting.js'
import type { Mask, RgbImage } from '../src/imaging/types.js'

const W = 96
const H = 48
/** The true α: a soft vertical edge 6 px wide around x = 48, wavy so it is no straight line. */
const trueAlpha = (x: number, y: number) => Math.min(1, Math.max(0, (x - 45 - 3 * Math.sin(y / 6)) / 6))

function mixed(): { image: RgbImage; alpha: Float32Array } {
  const data = new Uint8Array(W * H * 3)
  const alpha = new Float32Array(W * H)
  // Foreground and background are textured along their colour lines (the model the solve assumes).
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const a = trueAlpha(x, y)
      const t = 0.8 + 0.2 * Math.sin((x + 2 * y) / 5)
      const F = [230 * t, 60 * t, 40 * t]
      const B = [40 * t, 110 * t, 200 * t]
      for (let c = 0; c < 3; c++) data[(y * W + x) * 3 + c] = Math.round(a * F[c] + (1 - a) * B[c])
      alpha[y * W + x] = a
    }
  return { image: { data, width: W, height: H, channels: 3 }, alpha }
}

/** What a model gives: a straight, too-wide ramp 16 px wide that ignores the wave. */
function wrongMask(): Mask {
  const data = new Uint8Array(W * H)
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) data[y * W + x] = Math.round(Math.min(1, Math.max(0, (x - 40) / 16)) * 255)
  return { data, width: W, height: H }
}

const sad = (m: Uint8Array, alpha: Float32Array) => m.reduce((s, v, i) => s + Math.abs(v / 255 - alpha[i]), 0)

describe('mattingSolve', () => {
  it('recovers a known soft edge from the photo where the mask was wrong', () => {
    const { image, alpha } = mixed()
    const mask = wrongMask()
    // A weak prior and enough iterations for a mask this wrong (16 px off in places).
    const matte = mattingSolve(image, mask, { priorWeight: 1e-3, iterations: 100 })
    // Error against the truth at most a quarter of the mask's, and nothing moves outside the band.
    expect(sad(matte.data, alpha)).toBeLessThan(sad(mask.data, alpha) * 0.25)
    const band = unknownBand(mask, { low: 8, high: 247, widen: 4 })
    for (let i = 0; i < band.length; i++) if (!band[i]) expect(matte.data[i]).toBe(mask.data[i])
  })

  it('leaves a mask with no unsure pixels as it is', () => {
    const { image } = mixed()
    const hard = { data: wrongMask().data.map((v) => (v < 128 ? 0 : 255)), width: W, height: H }
    expect(mattingSolve(image, hard).data).toEqual(hard.data)
  })
})
