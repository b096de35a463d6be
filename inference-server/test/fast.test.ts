/**
 * `fast`'s finish (src/levels/fast.ts), with made photos and stub models, no real model: the
 * contrast stretch's exact values, the colour-backed faint pass (a half-sure body the photo's
 * colours call foreground is raised; a haze over the background's colours is not), that the faint
 * pass decides at a working size and brings its decision to the photo's size, and that `fast`
 * finishes only a mask made at a smaller input than the model's native one.
 */
import { describe, expect, it } from 'vitest'
import type { RgbImage } from '../src/imaging/types.js'
import { FAST_DEFAULTS, type FastOptions, fastMask, finishFast, stretchAlpha, workingSize } from '../src/levels/fast.js'
import { inputFor } from '../src/levels/sizes.js'
import type { InputSize, Segmenter } from '../src/segmentation/index.js'
import { STUB_INPUT } from './helpers.js'

const W = 96
const H = 64
const RED = [220, 30, 30]
const BLUE = [30, 40, 200]
/** The subject: a red square, x 24–71, y 16–47, on blue (each pixel k × k at scale k). */
const inSquare = (x: number, y: number) => x >= 24 && x < 72 && y >= 16 && y < 48

function photo(k = 1): RgbImage {
  const data = new Uint8Array(W * k * H * k * 3)
  for (let y = 0; y < H * k; y++)
    for (let x = 0; x < W * k; x++) data.set(inSquare(x / k, y / k) ? RED : BLUE, (y * W * k + x) * 3)
  return { data, width: W * k, height: H * k, channels: 3 }
}
const maskOf = (f: (x: number, y: number) => number, k = 1) => {
  const data = new Uint8Array(W * k * H * k)
  for (let y = 0; y < H * k; y++) for (let x = 0; x < W * k; x++) data[y * W * k + x] = f(x / k, y / k)
  return { data, width: W * k, height: H * k }
}
/**
 * What a small input often gives: the square's left half sure (255), its right half half-sure
 * (120), a faint haze (120) over a blue patch below it, x 24–71, y 52–61; elsewhere 0.
 */
const halfSureAt = (k: number) =>
  maskOf((x, y) => (inSquare(x, y) ? (x < 48 ? 255 : 120) : x >= 24 && x < 72 && y >= 52 && y < 62 ? 120 : 0), k)
const halfSure = halfSureAt(1)
const at = (m: { data: Uint8Array; width: number }, x: number, y: number) => m.data[y * m.width + x]

const NONE: FastOptions = { side: 640, shape: 'square', stretch: null, faint: null }

describe('the contrast stretch', () => {
  it('maps lo and below to 0, hi and above to 255, linearly between (rounded)', () => {
    expect([...stretchAlpha(Uint8Array.of(0, 32, 33, 80, 127, 128, 200, 255), 32, 128)]).toEqual([
      0, 0, 3, 128, 252, 255, 255, 255,
    ])
    expect([...stretchAlpha(Uint8Array.of(0, 64, 191, 255), 0, 255)]).toEqual([0, 64, 191, 255])
  })

  it('writes where it is told, the input itself too (the finish stretches its own copy in place)', () => {
    const alpha = Uint8Array.of(0, 32, 80, 128, 200)
    expect(stretchAlpha(alpha, 32, 128, alpha)).toBe(alpha)
    expect([...alpha]).toEqual([0, 0, 128, 255, 255])
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

describe("fast's finish at a working size", () => {
  it('is the photo scaled, aspect kept, to at most the given pixels; never enlarged', () => {
    expect(workingSize({ width: 4000, height: 3000 }, 704 * 640)).toEqual({ width: 775, height: 581 })
    expect(workingSize({ width: 960, height: 640 }, 90 * 60)).toEqual({ width: 90, height: 60 })
    expect(workingSize({ width: 96, height: 64 }, 704 * 640)).toEqual({ width: 96, height: 64 })
  })

  it('decides the faint pass at the working size and raises exactly the half-sure body at full size', async () => {
    // 960 × 640, decided at 90 × 60: a working pixel straddles the photo's edges between parts.
    const big = halfSureAt(10)
    const out = await finishFast(photo(10), big, { ...NONE, faint: { low: 25, high: 230, share: 0.8 } }, 90 * 60)
    let changed = 0
    for (let i = 0; i < big.data.length; i++) {
      if (out.data[i] === big.data[i]) continue
      changed++
      // Only faint pixels change, and only to sure foreground, and only inside the square's right half.
      const x = i % 960
      const y = Math.floor(i / 960)
      expect([big.data[i], out.data[i], inSquare(x / 10, y / 10) && x >= 480]).toEqual([120, 255, true])
    }
    expect(changed).toBe(240 * 320) // all of it: each full-size pixel takes its nearest working pixel's decision
    expect(at(out, 480, 560)).toBe(120) // the haze stays
  })
})

describe('fastMask', () => {
  const any = { kind: 'any' as const, native: { width: 1024, height: 1024 }, multiple: 64 }

  it("runs the model once at fast's input and finishes its mask", async () => {
    const sizes: InputSize[] = []
    const out = await fastMask(stub(any, sizes), photo())
    expect(sizes).toEqual([inputFor(photo(), FAST_DEFAULTS.side, FAST_DEFAULTS.shape, 64)])
    expect(out.data).toEqual((await finishFast(photo(), halfSure, FAST_DEFAULTS)).data)
    expect(out.data).not.toEqual(halfSure.data)
  })

  it("decides the faint pass at the model input's pixels on a photo larger than that input", async () => {
    // 1920 × 1280, the square's half-sure half cut off by a one-pixel line (0) from a wide faint haze
    // over the blue below it. At full size the two are regions apart (the red half is raised, the
    // haze is not); at 704 × 640's pixels the line blurs into both, and the one region is mostly blue.
    const k = 20
    const gap = maskOf((x, y) => (inSquare(x, y) ? (x < 48 ? 255 : 120) : y === 48 ? 0 : y > 48 ? 120 : 0), k)
    const model: Segmenter = { ...stub(any, []), segment: async () => ({ ...gap, data: new Uint8Array(gap.data) }) }
    const o = { ...FAST_DEFAULTS, stretch: null }
    const out = await fastMask(model, photo(k), o)
    const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b))
    expect(same(out.data, (await finishFast(photo(k), gap, o, 704 * 640)).data)).toBe(true)
    const full = await finishFast(photo(k), gap, o)
    expect([at(full, 1200, 600), at(full, 1200, 1100)]).toEqual([255, 120])
    expect([at(out, 1200, 600), at(out, 1200, 1100)]).toEqual([120, 120])
  })

  it("leaves a fixed-size model's mask as it is (its fast is its balanced)", async () => {
    const sizes: InputSize[] = []
    const out = await fastMask(stub(STUB_INPUT, sizes), photo())
    expect(sizes).toEqual([{ width: 1024, height: 1024 }])
    expect(out.data).toEqual(halfSure.data)
  })
})
