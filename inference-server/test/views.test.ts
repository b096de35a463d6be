/**
 * `high`'s views and their arbitration (src/levels/views.ts, arbitrate.ts, colour-cut.ts), with
 * made photos and stub models: `balanced`'s mask is kept wherever nothing independent says the
 * other view is right; a region the other view adds and the photo's colours back is taken;
 * `balanced` itself never changes.
 */
import { describe, expect, it } from 'vitest'
import type { RgbImage } from '../src/imaging/types.js'
import { arbitrate } from '../src/levels/arbitrate.js'
import { colourCut, seedLabels } from '../src/levels/colour-cut.js'
import { HIGH_DEFAULTS, levelMask } from '../src/levels/index.js'
import type { InputSize, Segmenter } from '../src/segmentation/index.js'

const W = 96
const H = 64
const RED = [220, 30, 30]
const BLUE = [30, 40, 200]

/** A red square (x 24–71, y 16–47) on blue. */
function photo(): RgbImage {
  const data = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) data.set(x >= 24 && x < 72 && y >= 16 && y < 48 ? RED : BLUE, (y * W + x) * 3)
  return { data, width: W, height: H, channels: 3 }
}
const inSquare = (x: number, y: number) => x >= 24 && x < 72 && y >= 16 && y < 48

/** A mask from a rule over (x, y) in the photo's own frame. */
const maskOf = (f: (x: number, y: number) => number) => {
  const data = new Uint8Array(W * H)
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data[y * W + x] = f(x, y)
  return data
}

/** `balanced`'s view (native size) sees the square's left half only; the small view sees `others`. */
function stub(others: (x: number, y: number) => number, sizes: InputSize[] = []): Segmenter {
  return {
    version: 'stub@1',
    input: { kind: 'any', native: { width: 1024, height: 1024 }, multiple: 64 },
    async segment(image, size) {
      if (size) sizes.push(size)
      const other = size && size.width !== 1024
      const data = maskOf((x, y) => (other ? others(x, y) : inSquare(x, y) && x < 48 ? 255 : 0))
      return { data, width: image.width, height: image.height }
    },
    close: async () => {},
  }
}

describe("high's views, settled per region", () => {
  it('takes back the part of the subject the small view adds and the colours back', async () => {
    const sizes: InputSize[] = []
    const { mask, modelRuns } = await levelMask(
      stub((x, y) => (inSquare(x, y) ? 255 : 0), sizes),
      photo(),
      'high',
    )
    expect(modelRuns).toBe(2) // balanced and fast's 640² view
    expect(sizes).toContainEqual({ width: 640, height: 640 })
    expect(mask.data[30 * W + 60]).toBe(255) // the right half, which balanced lost
    expect(mask.data[30 * W + 80]).toBe(0)
  })

  it("keeps balanced's where the small view adds what the colours call background", async () => {
    // The small view also takes a blue band right of the square: same colours as the background.
    const others = (x: number, y: number) => (inSquare(x, y) || (x >= 72 && x < 90 && y >= 16 && y < 48) ? 255 : 0)
    // As shipped, the region (red half and blue band together) is judged whole: 57 % red is not
    // enough (colourShare 0.8), so balanced's mask stays, lost half and all.
    const whole = await levelMask(stub(others), photo(), 'high')
    expect(whole.mask.data[30 * W + 60]).toBe(0)
    expect(whole.mask.data[30 * W + 80]).toBe(0)
    // Split by the evidence, the red half is taken and the blue band is not.
    const split = { ...HIGH_DEFAULTS, arbitration: { ...HIGH_DEFAULTS.arbitration, split: true } }
    const { mask } = await levelMask(stub(others), photo(), 'high', undefined, split)
    expect(mask.data[30 * W + 60]).toBe(255) // the red half: backed
    expect(mask.data[30 * W + 80]).toBe(0) // the blue band: not backed
  })
})

describe('arbitrate', () => {
  const base = { data: maskOf((x, y) => (inSquare(x, y) && x < 48 ? 255 : 0)), width: W, height: H }
  const agreed = maskOf((x, y) => (inSquare(x, y) ? 255 : 0))
  const cutSquare = maskOf((x, y) => (inSquare(x, y) ? 1 : 0))

  it("judges only what the other views add when `directions` is 'gain'", () => {
    // The other views drop the square's left half (a loss) and the colours back them.
    const lost = { data: maskOf((x, y) => (inSquare(x, y) ? 255 : 0)), width: W, height: H }
    const cut = new Uint8Array(W * H)
    expect(arbitrate(lost, [base.data], cut, { directions: 'both' }).report.taken).toBe(1)
    expect(arbitrate(lost, [base.data], cut, { directions: 'gain' }).report.taken).toBe(0)
  })

  it('changes a region only where the colour cut backs it', () => {
    const take = (cut: Uint8Array | null) => arbitrate(base, [agreed, agreed], cut).report.taken
    expect(take(cutSquare)).toBe(1)
    expect(take(null)).toBe(0)
    expect(take(new Uint8Array(W * H))).toBe(0)
  })

  it('ignores departures of `delta` or less and regions below `minArea`', () => {
    const slight = maskOf((x, y) => (inSquare(x, y) && x < 48 ? 255 : inSquare(x, y) ? 60 : 0))
    expect(arbitrate(base, [slight, slight], cutSquare, { delta: 64 }).report.regions).toBe(0)
    expect(arbitrate(base, [slight, slight], cutSquare, { delta: 59 }).report.regions).toBe(1)
    // The right half is 24×32 = 768 px of 6144: 12.5 %.
    expect(arbitrate(base, [agreed, agreed], cutSquare, { minArea: 0.13 }).report.regions).toBe(0)
  })

  it('raises a faint region the colour cut calls foreground (the faint pass), and only when on', () => {
    const faint = { ...base, data: maskOf((x, y) => (inSquare(x, y) ? (x < 48 ? 255 : 90) : 0)) }
    const off = arbitrate(faint, [faint.data], cutSquare, { faintLow: 0, faintHigh: 0 })
    expect(off.mask.data[30 * W + 60]).toBe(90)
    const on = arbitrate(faint, [faint.data], cutSquare, { faintLow: 51, faintHigh: 128 })
    expect(on.mask.data[30 * W + 60]).toBe(255)
    expect(on.report.raised).toBe(24 * 32)
    const notBacked = arbitrate(faint, [faint.data], new Uint8Array(W * H), { faintLow: 51, faintHigh: 128 })
    expect(notBacked.mask.data[30 * W + 60]).toBe(90)
  })
})

describe('colour cut', () => {
  it('seeds sure pixels where every view is sure alike, else probably the side of their mean', () => {
    expect([...seedLabels([Uint8Array.of(255, 0, 200, 40), Uint8Array.of(240, 10, 100, 30)], 230)]).toEqual([
      1, 0, 3, 2,
    ])
  })

  it('puts a region every view is unsure of on the side its colours belong to', async () => {
    // The views are sure of the square's left half and of the background far from it; the right half is unsure.
    const view = maskOf((x, y) =>
      inSquare(x, y) ? (x < 48 ? 255 : 128) : x >= 20 && x < 76 && y >= 12 && y < 52 ? 128 : 0,
    )
    const cut = await colourCut(photo(), [view, view])
    expect(cut).not.toBeNull()
    expect(cut?.[30 * W + 60]).toBe(1) // red: foreground's colour
    expect(cut?.[14 * W + 60]).toBe(0) // blue: background's
  })

  it('says nothing when the views leave one side without a sure pixel', async () => {
    expect(await colourCut(photo(), [new Uint8Array(W * H).fill(128)])).toBeNull()
  })
})
