/**
 * Quality levels' parts without the model (stub segmenters): what ships, fast's input size, high's
 * zoomed look over the edge band, and the runtime setting. The real model's levels are in
 * segmentation.test.ts.
 */
import { describe, expect, it } from 'vitest'
import type { Mask, RgbImage } from '../src/imaging/types.js'
import { uncertainBand, widen, zoomEdges } from '../src/levels/edge-tiles.js'
import { gridTiles } from '../src/levels/tile-layout.js'
import { FAST_DEFAULTS, HIGH_DEFAULTS, levelMask } from '../src/levels/index.js'
import { EDGE_BAND } from '../src/levels/bands.js'
import { EDGE_TILE_DEFAULTS } from '../src/levels/edge-tiles.js'
import { fastInputFor } from '../src/levels/fast.js'
import { levelAlpha, refineEdges } from '../src/remove.js'
import { inputFor } from '../src/levels/sizes.js'
import type { InputSize, Segmenter } from '../src/segmentation/index.js'
import { runtimeFromEnv } from '../src/segmentation/model.js'
import { STUB_INPUT } from './helpers.js'

const SIZE = 1600
const R = 500
/** A white disc of radius R on black: the truth is crisp. */
function discImage(): RgbImage {
  const data = new Uint8Array(SIZE * SIZE * 3)
  for (let y = 0; y < SIZE; y++)
    for (let x = 0; x < SIZE; x++)
      if ((x - SIZE / 2) ** 2 + (y - SIZE / 2) ** 2 < R * R) data.fill(255, (y * SIZE + x) * 3, (y * SIZE + x) * 3 + 3)
  return { data, width: SIZE, height: SIZE, channels: 3 }
}
const truth = (image: RgbImage): Uint8Array => Uint8Array.from({ length: SIZE * SIZE }, (_, i) => image.data[i * 3])
/** What a 1024² view of a 12 MP photo gives: the disc's edge as a 12-pixel ramp. */
function softMask(): Mask {
  const data = new Uint8Array(SIZE * SIZE)
  for (let y = 0; y < SIZE; y++)
    for (let x = 0; x < SIZE; x++) {
      const d = R - Math.hypot(x - SIZE / 2 + 0.5, y - SIZE / 2 + 0.5)
      data[y * SIZE + x] = Math.round(Math.min(1, Math.max(0, d / 12 + 0.5)) * 255)
    }
  return { data, width: SIZE, height: SIZE }
}
const sad = (a: Uint8Array, b: Uint8Array) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0)

/** A stub model: the crop's own red channel (sharp, right), or `confused` (all foreground). */
function stub(kind: 'sharp' | 'confused', sizes: InputSize[] = []): Segmenter {
  return {
    version: 'stub@1',
    input: { kind: 'any', native: { width: 512, height: 512 }, multiple: 64 },
    async segment(image, size) {
      if (size) sizes.push(size)
      const data = new Uint8Array(image.width * image.height)
      for (let i = 0; i < data.length; i++) data[i] = kind === 'sharp' ? image.data[i * 3] : 255
      return { data, width: image.width, height: image.height }
    },
    close: async () => {},
  }
}

describe('what ships', () => {
  // The variants the benchmark explores (bench/lib/fast-candidates.ts, high-candidates.ts: the other
  // arbitration directions, split regions, the ramp border, the edge refinement) reach the step
  // functions only from there: a removal runs these objects, and a change to one is a decision
  // (docs/decisions.md), made here on purpose.
  it("runs each level's shipped method", () => {
    expect(FAST_DEFAULTS).toEqual({
      side: 704,
      shape: 'lean',
      faint: { low: 25, high: 230, share: 0.5 },
      stretch: { lo: 32, hi: 160 },
    })
    expect(HIGH_DEFAULTS).toEqual({
      views: ['small'],
      arbitration: {
        delta: 64,
        minArea: 0.0005,
        colourShare: 0.8,
        split: false,
        directions: 'gain',
        faintLow: 0,
        faintHigh: 0,
      },
      cut: { maxPixels: 20_000, sure: 230, iterations: 3 },
      refine: false,
      faint: { low: 25, high: 230, share: 0.8, edge: { method: 'matte', steps: 1 } },
    })
    expect([EDGE_TILE_DEFAULTS.bandLow, EDGE_TILE_DEFAULTS.bandHigh]).toEqual([EDGE_BAND.low, EDGE_BAND.high])
  })

  it("leaves high's edge refinement off in a removal: its one switch is HIGH_DEFAULTS.refine", async () => {
    // A small grey disc on black whose model mask has a soft edge (the refinement's matting solve
    // at this size costs little): every view of the model gives that soft mask.
    const side = 160
    const image = { data: new Uint8Array(side * side * 3), width: side, height: side, channels: 3 } as const
    const soft = new Uint8Array(side * side)
    for (let y = 0; y < side; y++)
      for (let x = 0; x < side; x++) {
        const d = 50 - Math.hypot(x - side / 2 + 0.5, y - side / 2 + 0.5)
        if (d > 0) image.data.fill(200, (y * side + x) * 3, (y * side + x) * 3 + 3)
        soft[y * side + x] = Math.round(Math.min(1, Math.max(0, d / 10 + 0.5)) * 255)
      }
    const model: Segmenter = {
      ...stub('sharp'),
      segment: async () => ({ data: new Uint8Array(soft), width: side, height: side }),
    }
    const level = await levelMask(model, image, 'high')
    const removal = await levelAlpha(model, image, 'high')
    expect(removal.mask.data).toEqual(level.mask.data)
    // Switched on, the refinement would have moved the edge: the comparison above can fail.
    expect((await refineEdges(image, level.mask, true)).data).not.toEqual(level.mask.data)
  })
})

describe('fast input size', () => {
  it('square: side² whatever the photo', () => {
    expect(inputFor({ width: 1224, height: 816 }, 640, 'square', 64)).toEqual({ width: 640, height: 640 })
  })

  it('lean: the side along the long side, one step less along the short one', () => {
    expect(inputFor({ width: 1224, height: 816 }, 704, 'lean', 64)).toEqual({ width: 704, height: 640 })
    expect(inputFor({ width: 480, height: 854 }, 704, 'lean', 64)).toEqual({ width: 640, height: 704 })
    expect(inputFor({ width: 512, height: 512 }, 704, 'lean', 64)).toEqual({ width: 704, height: 640 })
  })

  it('is the native input on a static model', () => {
    expect(fastInputFor({ width: 1224, height: 816 }, STUB_INPUT)).toEqual({ width: 1024, height: 1024 })
  })

  it('fast runs the model once at the smaller input; balanced at the native one', async () => {
    const sizes: InputSize[] = []
    const image = { data: new Uint8Array(1224 * 816 * 3), width: 1224, height: 816, channels: 3 } as const
    await levelMask(stub('sharp', sizes), image, 'fast')
    await levelMask(stub('sharp', sizes), image, 'balanced')
    expect(sizes).toEqual([
      { width: 704, height: 640 },
      { width: 512, height: 512 },
    ])
  })
})

describe("high's zoomed look over the edge band", () => {
  const image = discImage()
  const base = softMask()

  it('finds the band and plans tiles only where it is', () => {
    const band = uncertainBand(base, 8, 247)
    const count = band.reduce((s, v) => s + v, 0)
    expect(count).toBeGreaterThan(2 * Math.PI * R * 10)
    expect(count).toBeLessThan(2 * Math.PI * R * 14)
    expect(widen(band, SIZE, SIZE, 4).reduce((s, v) => s + v, 0)).toBeGreaterThan(count)
    const tiles = gridTiles(band, SIZE, SIZE, 384, 64)
    // A 5 × 5 grid over 1600²: the centre tile sees only the disc's inside and the four corner
    // tiles only the background, so those are skipped.
    expect(tiles).toHaveLength(20)
  })

  it('replaces the soft edge with the close-ups: SAD against the truth falls, far pixels stay', async () => {
    const sizes: InputSize[] = []
    const { mask, tiles, kept } = await zoomEdges(
      stub('sharp', sizes),
      image,
      base,
      { width: 512, height: 512 },
      {
        tile: 512,
        overlap: 64,
      },
    )
    expect(kept).toBe(tiles)
    expect(sizes.every((s) => s.width === 512 && s.height === 512)).toBe(true)
    const t = truth(image)
    expect(sad(mask.data, t)).toBeLessThan(sad(base.data, t) * 0.5)
    const centre = (SIZE / 2) * SIZE + SIZE / 2
    expect([mask.data[0], mask.data[centre]]).toEqual([0, 255])
  })

  it('drops close-ups that contradict what the base is sure of', async () => {
    const { mask, kept, tiles } = await zoomEdges(
      stub('confused'),
      image,
      base,
      { width: 512, height: 512 },
      {
        tile: 512,
        overlap: 64,
      },
    )
    expect(tiles).toBeGreaterThan(0)
    expect(kept).toBe(0)
    expect(sad(mask.data, base.data)).toBe(0)
  })

  it('stops after the first close-ups when none of them is kept, and runs them all when one is', async () => {
    const options = { tile: 512, overlap: 64, probeTiles: 2 }
    const confused = await zoomEdges(stub('confused'), image, base, { width: 512, height: 512 }, options)
    expect(confused.planned).toBeGreaterThan(2)
    expect([confused.tiles, confused.kept]).toEqual([2, 0])
    expect(sad(confused.mask.data, base.data)).toBe(0)
    const sharp = await zoomEdges(stub('sharp'), image, base, { width: 512, height: 512 }, options)
    expect(sharp.tiles).toBe(sharp.planned)
    expect(sharp.kept).toBe(sharp.planned)
  })

  it('leaves an image that is not much larger than the model input alone', async () => {
    const small = { ...image, width: 700, height: 700, data: image.data.subarray(0, 700 * 700 * 3) }
    const smallBase = { data: base.data.subarray(0, 700 * 700), width: 700, height: 700 }
    const { mask, tiles } = await zoomEdges(stub('sharp'), small, smallBase, { width: 512, height: 512 })
    expect(tiles).toBe(0)
    expect(mask).toBe(smallBase)
  })
})

describe('INFERENCE_RUNTIME', () => {
  it('is node by default, web when asked, and refuses anything else', () => {
    expect(runtimeFromEnv(undefined)).toBe('node')
    expect(runtimeFromEnv('web')).toBe('web')
    expect(() => runtimeFromEnv('gpu')).toThrow(
      'Expected one of node, web for INFERENCE_RUNTIME but received gpu of type string',
    )
  })
})
