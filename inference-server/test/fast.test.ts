/**
 * `fast`'s finish (src/levels/fast.ts), with made photos and stub models, no real model: the
 * contrast stretch's exact values, the colour-backed faint pass (a half-sure body the photo's
 * colours call foreground is raised; a haze over the background's colours is not), and that
 * `fast` finishes only a mask made at a smaller input than the model's native one.
 */
import { describe, expect, it } from 'vitest'
import type { RgbImage } from '../src/imaging/types.js'
import { FAST_DEFAULTS, type FastOptions, fastMask, finishFast, stretchAlpha } from '../src/levels/fast.js'
import { inputFor } from '../src/levels/sizes.js'
import type { InputSize, Segmenter } from '../src/segmentation/index.js'
import { STUB_INPUT } from './helpers.js'

const W = 96
const H = 64
const RED = [220, 30, 30]
const BLUE = [30, 40, 200]
/** The subject: a red square, x 24–71, y 16–47, on blue. */
const inSquare = (x: number, y: number) => x >= 24 && x < 72 && y >= 16 && y < 48

function photo(): RgbImage {
  const data = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data.set(inSquare(x, y) ? RED : BLUE, (y * W + x) * 3)
  return { data, width: W, height: H, channels: 3 }
}
const maskOf = (f: (x: number, y: number) => number) => {
  const data = new Uint8Array(W * H)
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data[y * W + x] = f(x, y)
  return { data, width: W, height: H }
}
/**
 * What a small input often gives: the square's left half sure (255), its right half half-sure
 * (120), a faint haze (120) over a blue patch below it, x 24–71, y 52–61; elsewhere 0.
 */
const halfSure = maskOf((x, y) =>
  inSquare(x, y) ? (x < 48 ? 255 : 120) : x >= 24 && x < 72 && y >= 52 && y < 62 ? 120 : 0,
)
const at = (m: { data: Uint8Array }, x: number, y: number) => m.data[y * W + x]

const NONE: FastOptions = { side: 640, shape: 'square', stretch: null, faint: null }

describe('the contrast stretch', () => {
  it('maps lo and below to 0, hi and above to 255, linearly between (rounded)', () => {
    expect([...stretchAlpha(Uint8Array.of(0, 32, 33, 80, 127, 128, 200, 255), 32, 128)]).toEqual([
      0, 0, 3, 128, 252, 255, 255, 255,
    ])
    expect([...stretchAlpha(Uint8Array.of(0, 64, 191, 255), 0, 255)]).toEqual([0, 64, 191, 255])
  })

  it('refuses levels that do not rise', () => {
    expect(() => stretchAlpha(Uint8Array.of(1), 128, 128)).toThrow(RangeError)
  })
})

describe("fast's finish", () => {
  it('the faint pass raises the half-sure body the colours call foreground, not the haze over the background', async () => {
    const out = await finishFast(photo(), halfSure, { ...NONE, faint: { low: 25, high: 230, share: 0.8 } })
    expect(at(out, 60, 30)).toBe(255) // the square's half-sure half: red like its sure half
    expect(at(out, 30, 30)).toBe(255)
    expect(at(out, 48, 56)).toBe(120) // the haze over blue stays as the model had it
    expect(at(out, 5, 5)).toBe(0)
  })

  it('the stretch follows the faint pass; with neither the mask is the model’s', async () => {
    const both = await finishFast(photo(), halfSure, {
      ...NONE,
      faint: { low: 25, high: 230, share: 0.8 },
      stretch: { lo: 32, hi: 128 },
    })
    expect([at(both, 60, 30), at(both, 48, 56)]).toEqual([255, 234]) // (120 − 32) × 255 / 96 = 233.75
    expect((await finishFast(photo(), halfSure, NONE)).data).toEqual(halfSure.data)
  })
})

/** A stub model that gives `halfSure` whatever the input, and records the inputs. */
function stub(input: Segmenter['input'], sizes: InputSize[]): Segmenter {
  return {
    version: 'stub@1',
    input,
    async segment(_image, size) {
      if (size) sizes.push(size)
      return { ...halfSure, data: new Uint8Array(halfSure.data) }
    },
    close: async () => {},
  }
}

describe('fastMask', () => {
  const any = { kind: 'any' as const, native: { width: 1024, height: 1024 }, multiple: 64 }

  it("runs the model once at fast's input and finishes its mask", async () => {
    const sizes: InputSize[] = []
    const out = await fastMask(stub(any, sizes), photo())
    expect(sizes).toEqual([inputFor(photo(), FAST_DEFAULTS.side, FAST_DEFAULTS.shape, 64)])
    expect(out.data).toEqual((await finishFast(photo(), halfSure, FAST_DEFAULTS)).data)
    expect(out.data).not.toEqual(halfSure.data)
  })

  it("leaves a fixed-size model's mask as it is (its fast is its balanced)", async () => {
    const sizes: InputSize[] = []
    const out = await fastMask(stub(STUB_INPUT, sizes), photo())
    expect(sizes).toEqual([{ width: 1024, height: 1024 }])
    expect(out.data).toEqual(halfSure.data)
  })
})
