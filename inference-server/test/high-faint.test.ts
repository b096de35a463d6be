/**
 * `high`'s own faint pass (src/levels/index.ts ownFaintPass, session 12), with a made photo and a
 * stub model: where `balanced` is half sure over a region its own sure pixels' colours call
 * foreground, `high` raises it, even when the other view is fainter still and so disputes nothing
 * (a plush giraffe's body on ../shared/gt); a faint haze over the background's colours stays;
 * `balanced` itself never changes.
 */
import { describe, expect, it } from 'vitest'
import type { RgbImage } from '../src/imaging/types.js'
import { HIGH_DEFAULTS, levelMask } from '../src/levels/index.js'
import type { InputSize, Segmenter } from '../src/segmentation/index.js'

const W = 96
const H = 64
const RED = [220, 30, 30]
const BLUE = [30, 40, 200]
/** The subject: a red square, x 24–71, y 16–47, on blue. */
const inSquare = (x: number, y: number) => x >= 24 && x < 72 && y >= 16 && y < 48
const inHaze = (x: number, y: number) => x >= 24 && x < 72 && y >= 52 && y < 62

function photo(): RgbImage {
  const data = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data.set(inSquare(x, y) ? RED : BLUE, (y * W + x) * 3)
  return { data, width: W, height: H, channels: 3 }
}
/** A mask: the square's left half at `sure`, its right half and a haze over blue below it at `faint`. */
const maskOf = (sure: number, faint: number) => {
  const data = new Uint8Array(W * H)
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) data[y * W + x] = inSquare(x, y) ? (x < 48 ? sure : faint) : inHaze(x, y) ? faint : 0
  return data
}
const at = (m: { data: Uint8Array }, x: number, y: number) => m.data[y * W + x]

/** `balanced`'s view (1024²): left half sure, right half and haze at 120; the other view: `small`. */
function stub(small: Uint8Array, sizes: InputSize[] = []): Segmenter {
  return {
    version: 'stub@1',
    input: { kind: 'any', native: { width: 1024, height: 1024 }, multiple: 64 },
    async segment(image, size) {
      if (size) sizes.push(size)
      const native = !size || size.width === 1024
      return { data: native ? maskOf(255, 120) : new Uint8Array(small), width: image.width, height: image.height }
    },
    close: async () => {},
  }
}

describe("high's own faint pass", () => {
  it("raises balanced's half-sure part its own colours call foreground, not the haze; balanced stays", async () => {
    const sizes: InputSize[] = []
    // The other view is fainter still (80): it adds nothing, so there is no dispute to settle.
    const model = stub(maskOf(255, 80), sizes)
    const high = await levelMask(model, photo(), 'high')
    expect(sizes).toContainEqual({ width: 640, height: 640 })
    expect(at(high.mask, 60, 30)).toBe(255) // the square's half-sure half: red like its sure half
    expect(at(high.mask, 30, 30)).toBe(255)
    expect(at(high.mask, 48, 56)).toBe(120) // the haze over blue stays as balanced had it
    expect(at(high.mask, 5, 5)).toBe(0)
    const balanced = await levelMask(model, photo(), 'balanced')
    expect(balanced.mask.data).toEqual(maskOf(255, 120))
  })

  it('is what moves it: without the pass the other view cannot (it only adds where it is surer)', async () => {
    const off = { ...HIGH_DEFAULTS, faint: null }
    const high = await levelMask(stub(maskOf(255, 80)), photo(), 'high', undefined, off)
    expect(high.mask.data).toEqual(maskOf(255, 120))
  })

  it('leaves a half-sure region alone when under 80 % of it has the foreground colours', async () => {
    // balanced half sure over the square's right half and a blue band right of it, one region:
    // 24 × 32 red and 18 × 32 blue pixels, 57 % red.
    const wide = new Uint8Array(W * H)
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        wide[y * W + x] = inSquare(x, y) && x < 48 ? 255 : x >= 48 && x < 90 && y >= 16 && y < 48 ? 120 : 0
    const model = stub(maskOf(255, 80))
    model.segment = async (image, size) => ({
      data: !size || size.width === 1024 ? new Uint8Array(wide) : maskOf(255, 80),
      width: image.width,
      height: image.height,
    })
    const high = await levelMask(model, photo(), 'high')
    expect(at(high.mask, 60, 30)).toBe(120)
    expect(at(high.mask, 80, 30)).toBe(120)
  })

  it("learns the colours from balanced's sure pixels alone, even where the other view is sure of nothing", async () => {
    // The other view nowhere above 200: a colour model of what both views are sure of has no foreground.
    const high = await levelMask(stub(maskOf(200, 80)), photo(), 'high')
    expect(at(high.mask, 60, 30)).toBe(255)
    expect(at(high.mask, 48, 56)).toBe(120)
  })
})
