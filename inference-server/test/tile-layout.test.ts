/**
 * Where `high`'s close-ups go (src/levels/tile-layout.ts): the cover layout must leave no band
 * pixel outside every tile's full-weight core, and take fewer tiles (model runs) than the grid
 * where the band allows it. Constructed masks, no model.
 */
import { describe, expect, it } from 'vitest'
import { coreInset, coverTiles, gridTiles, tileCore } from '../src/levels/tile-layout.js'
import { type Rect, taperWeights } from '../src/refinement/region.js'

const SIZE = 1600
const TILE = 384
const OVERLAP = 64
const options = { tile: TILE, overlap: OVERLAP, minBandPixels: 0, coverWeight: 1 }

/** A band from a predicate over pixel coordinates. */
function band(width: number, height: number, inside: (x: number, y: number) => boolean): Uint8Array {
  const out = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) out[y * width + x] = inside(x, y) ? 1 : 0
  return out
}

/** A subject's outline: a ring 12 px wide around a disc of radius 500 in the middle. */
const ring = band(SIZE, SIZE, (x, y) => Math.abs(Math.hypot(x - SIZE / 2 + 0.5, y - SIZE / 2 + 0.5) - 500) < 6)

/** Band pixels that lie in no tile's core (where the fusion gives a tile full weight). */
function uncovered(b: Uint8Array, width: number, height: number, tiles: Rect[]): number {
  const cores = tiles.map((t) => tileCore(t, width, height, coreInset(OVERLAP / 2, 1)))
  let n = 0
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (b[y * width + x] && !cores.some((c) => x >= c.x0 && x < c.x1 && y >= c.y0 && y < c.y1)) n++
  return n
}

function expectInside(tiles: Rect[], width: number, height: number) {
  for (const t of tiles) {
    expect(t.x0).toBeGreaterThanOrEqual(0)
    expect(t.y0).toBeGreaterThanOrEqual(0)
    expect(t.x1).toBeLessThanOrEqual(width)
    expect(t.y1).toBeLessThanOrEqual(height)
    expect([t.x1 - t.x0, t.y1 - t.y0]).toEqual([Math.min(TILE, width), Math.min(TILE, height)])
  }
}

describe("high's tile layout", () => {
  it('covers every pixel of an outline with fewer tiles than the grid', () => {
    const grid = gridTiles(ring, SIZE, SIZE, TILE, OVERLAP)
    const cover = coverTiles(ring, SIZE, SIZE, options)
    // The 5 × 5 grid skips only the centre and the four corners.
    expect(grid).toHaveLength(20)
    expect(cover.length).toBeLessThanOrEqual(10)
    expectInside(cover, SIZE, SIZE)
    expect(uncovered(ring, SIZE, SIZE, cover)).toBe(0)
  })

  it('puts one tile on a small blob that straddles four grid cells', () => {
    // The grid's origins on 1600 px are 0, 304, 608, 912, 1216: a blob around (660, 660) touches
    // the cells starting at 304 and 608 on both axes.
    const blob = band(SIZE, SIZE, (x, y) => Math.hypot(x - 660, y - 660) < 40)
    expect(gridTiles(blob, SIZE, SIZE, TILE, OVERLAP)).toHaveLength(4)
    const cover = coverTiles(blob, SIZE, SIZE, options)
    expect(cover).toHaveLength(1)
    expect(uncovered(blob, SIZE, SIZE, cover)).toBe(0)
    // Centred on the blob, so the close-up sees it with context on every side.
    const [t] = cover
    expect(Math.abs((t.x0 + t.x1) / 2 - 660)).toBeLessThanOrEqual(16)
    expect(Math.abs((t.y0 + t.y1) / 2 - 660)).toBeLessThanOrEqual(16)
  })

  it('packs a band that fills the image no worse than the grid, and covers all of it', () => {
    const w = 1500
    const h = 1100
    const full = band(w, h, () => true)
    const grid = gridTiles(full, w, h, TILE, OVERLAP)
    const cover = coverTiles(full, w, h, options)
    expect(cover.length).toBeLessThanOrEqual(grid.length)
    expectInside(cover, w, h)
    expect(uncovered(full, w, h, cover)).toBe(0)
  })

  it('skips specks below minBandPixels and covers what is left', () => {
    const specks = band(SIZE, SIZE, (x, y) => (x < 8 && y < 8) || Math.abs(Math.hypot(x - 1100, y - 1100) - 200) < 4)
    const all = coverTiles(specks, SIZE, SIZE, options)
    const some = coverTiles(specks, SIZE, SIZE, { ...options, minBandPixels: 100 })
    expect(some.length).toBe(all.length - 1)
    expect(uncovered(specks, SIZE, SIZE, all)).toBe(0)
    expect(uncovered(specks, SIZE, SIZE, some)).toBe(64)
  })

  it('at coverWeight ½ gives every band pixel at least half weight, and full weight where tiles meet', () => {
    const half = coverTiles(ring, SIZE, SIZE, { ...options, coverWeight: 0.5 })
    expect(half.length).toBeLessThanOrEqual(coverTiles(ring, SIZE, SIZE, options).length)
    // The fusion's own weights (edge-tiles.ts tapers each tile over half the overlap).
    const weight = new Float32Array(SIZE * SIZE)
    for (const t of half) {
      const w = taperWeights(t, SIZE, SIZE, OVERLAP / 2)
      for (let y = t.y0; y < t.y1; y++)
        for (let x = t.x0; x < t.x1; x++) weight[y * SIZE + x] += w[(y - t.y0) * (t.x1 - t.x0) + x - t.x0]
    }
    let least = 1
    let full = 0
    let count = 0
    for (let i = 0; i < ring.length; i++) {
      if (!ring[i]) continue
      least = Math.min(least, weight[i])
      full += Number(weight[i] >= 0.999)
      count++
    }
    expect(least).toBeGreaterThanOrEqual(0.5)
    expect(full / count).toBeGreaterThan(0.9)
  })

  it('insets a tile by where its taper reaches the weight', () => {
    expect([coreInset(64, 1), coreInset(64, 0.5), coreInset(64, 0)]).toEqual([64, 32, 0])
    const w = taperWeights({ x0: 100, y0: 0, x1: 200, y1: 1 }, 1000, 1, 64)
    expect(w[coreInset(64, 0.25)]).toBeGreaterThanOrEqual(0.25)
  })

  it('takes one tile when the image is no larger than a tile, none for an empty band', () => {
    const small = band(300, 200, (x, y) => x === 150 && y === 100)
    expect(coverTiles(small, 300, 200, options)).toEqual([{ x0: 0, y0: 0, x1: 300, y1: 200 }])
    expect(coverTiles(new Uint8Array(SIZE * SIZE), SIZE, SIZE, options)).toEqual([])
  })
})
