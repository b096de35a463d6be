/**
 * @module
 * `high`'s zoomed second look (issue 14). The model sees a whole photo at 1024², so on a 12 MP
 * photo one model pixel spans ~4 source pixels and the upscaled mask edge is that soft. Here the
 * uncertain edge band of `balanced`'s mask is covered with tiles cropped at source resolution,
 * each segmented again at the model's full input size, and the tiles' masks replace the base
 * inside the band (widened by a margin, since the true edge may lie a few source pixels outside the
 * soft one). A tile is a close-up without the whole subject in view: when it disagrees with the
 * base on pixels the base is sure of (away from the band), the model has mistaken what the subject
 * is in that crop, and the tile is dropped. Overlapping tiles are averaged with weights that fall
 * to 0 at their inner sides, so neither tiles nor the band leave a seam. Each tile is a model run:
 * where they go is planTiles's choice (tile-layout.ts), and when the first few are all dropped the
 * rest are not run.
 */
import { boxMean } from '../imaging/refine.js'
import type { Mask, RgbImage } from '../imaging/types.js'
import { type Rect, rectHeight, rectWidth, taperWeights } from '../refinement/region.js'
import { cropRgb } from '../refinement/zoom.js'
import type { InputSize, Segmenter } from '../segmentation/index.js'
import { EDGE_BAND, SUBJECT } from './bands.js'
import { coverTiles, gridTiles } from './tile-layout.js'

export interface EdgeTileOptions {
  /** Tile side in source pixels (a crop this size is resized to the model's input). */
  tile: number
  /** Overlap of neighbouring tiles, in source pixels. */
  overlap: number
  /** Base values strictly between these (8-bit) are the uncertain band. */
  bandLow: number
  bandHigh: number
  /** The band is widened by this many model pixels' worth of source pixels. */
  marginModelPixels: number
  /** A tile whose mask flips more than this fraction of the base's sure pixels is dropped. */
  maxDisagreement: number
  /** Only zoom when the source's long side is at least this many times the model input's. */
  minZoom: number
  /** No tile placed for fewer than this many band pixels left uncovered (tile-layout.ts coverTiles). */
  minBandPixels: number
  /** A placed tile covers the pixels where its fusion weight is at least this (tile-layout.ts). */
  coverWeight: number
  /** The grid's tiles are used instead when the widened band is more than this share of the image. */
  coverMaxBand: number
  /** When none of the first this many close-ups is kept, the rest are not run (0: run all). */
  probeTiles: number
}

/** Tuned on bench/quality-synthetic.ts (docs/quality.md "Quality levels"). */
export const EDGE_TILE_DEFAULTS: EdgeTileOptions = {
  tile: 1024,
  overlap: 128,
  bandLow: EDGE_BAND.low,
  bandHigh: EDGE_BAND.high,
  marginModelPixels: 1.5,
  maxDisagreement: 0.03,
  minZoom: 1.5,
  minBandPixels: 10_000,
  coverWeight: 0.5,
  coverMaxBand: 0.2,
  probeTiles: 3,
}

export interface ZoomResult {
  mask: Mask
  /** Tiles segmented (model runs), of those planned, and how many of them were kept. */
  tiles: number
  planned: number
  kept: number
}

/** 1 where the base is uncertain (bandLow < v < bandHigh). */
export function uncertainBand(mask: Mask, low: number, high: number): Uint8Array {
  const band = new Uint8Array(mask.data.length)
  for (let i = 0; i < band.length; i++) band[i] = mask.data[i] > low && mask.data[i] < high ? 1 : 0
  return band
}

/** The band widened by `r` pixels (a square window), by a box mean: O(n) for any r. */
export function widen(band: Uint8Array, width: number, height: number, r: number): Uint8Array {
  if (r < 1) return band
  const mean = boxMean(Float32Array.from(band), width, height, r)
  const out = new Uint8Array(band.length)
  for (let i = 0; i < out.length; i++) out[i] = mean[i] > 1e-7 ? 1 : 0
  return out
}

/**
 * Where the close-ups go, most band first: tiles placed where the widened band is (tile-layout.ts
 * coverTiles), or the grid's tiles that touch the band (the layout before issue 14's tuning) when
 * those are no more, or when the band fills more than `coverMaxBand` of the frame: such a band is
 * not an outline but a region the model is unsure of (smoke, a lattice), the cover saves little
 * there, and on the rocket composite its positions lost most of the gain (more of its close-ups
 * failed the disagreement check; docs/quality.md, bench/results/high-tuning.json).
 * @example planTiles(band, near, 4240, 2832, EDGE_TILE_DEFAULTS).length // the tiles along the subject's outline
 */
export function planTiles(
  band: Uint8Array,
  near: Uint8Array,
  width: number,
  height: number,
  o: EdgeTileOptions,
): Rect[] {
  const grid = gridTiles(band, width, height, o.tile, o.overlap)
  const dense = bandPixels(near, width, { x0: 0, y0: 0, x1: width, y1: height }) > o.coverMaxBand * width * height
  const cover = dense ? grid : coverTiles(near, width, height, o)
  const tiles = cover.length < grid.length ? cover : grid
  const count = new Map(tiles.map((r) => [r, bandPixels(near, width, r)]))
  return tiles.sort((a, b) => count.get(b)! - count.get(a)!)
}

function bandPixels(band: Uint8Array, width: number, r: Rect): number {
  let n = 0
  for (let y = r.y0; y < r.y1; y++) for (let i = y * width + r.x0; i < y * width + r.x1; i++) n += band[i]
  return n
}

/** Fraction of the base's sure pixels in the tile (outside the widened band) whose side the tile flips. */
function disagreement(base: Mask, near: Uint8Array, rect: Rect, tile: Mask): number {
  let sure = 0
  let flipped = 0
  const w = rectWidth(rect)
  for (let y = rect.y0; y < rect.y1; y++) {
    for (let x = rect.x0; x < rect.x1; x++) {
      const i = y * base.width + x
      if (near[i]) continue
      sure++
      if (base.data[i] >= SUBJECT !== tile.data[(y - rect.y0) * w + (x - rect.x0)] >= SUBJECT) flipped++
    }
  }
  return sure ? flipped / sure : 0
}

/**
 * The base mask with its edge band re-segmented at source resolution. Returns the base itself
 * (no model run) when the image is too small for a closer look to see more.
 * @example const { mask } = await zoomEdges(segmenter, image, balancedMask, { width: 1024, height: 1024 })
 */
export async function zoomEdges(
  segmenter: Segmenter,
  image: RgbImage,
  base: Mask,
  native: InputSize,
  options: Partial<EdgeTileOptions> = {},
  /** Checked before each close-up: a caller that went away pays for no more of them. */
  signal?: AbortSignal,
): Promise<ZoomResult> {
  const o = { ...EDGE_TILE_DEFAULTS, ...options }
  const { width, height } = image
  const zoom = Math.max(width / native.width, height / native.height)
  if (zoom < o.minZoom) return { mask: base, tiles: 0, planned: 0, kept: 0 }
  const band = uncertainBand(base, o.bandLow, o.bandHigh)
  const near = widen(band, width, height, Math.round(o.marginModelPixels * zoom))
  const tiles = planTiles(band, near, width, height, o)
  const acc = new Float32Array(width * height)
  const weight = new Float32Array(width * height)
  let kept = 0
  let runs = 0
  for (const rect of tiles) {
    // Where the model mistook the subject in each of the first close-ups (those holding the most
    // band), it does so in the rest too (a cat's fur or a cup filling the crop): stop paying for them.
    if (o.probeTiles > 0 && runs === o.probeTiles && kept === 0) break
    signal?.throwIfAborted()
    runs++
    const mask = await segmenter.segment(cropRgb(image, rect), native)
    if (disagreement(base, near, rect, mask) > o.maxDisagreement) continue
    kept++
    accumulate(acc, weight, near, mask, rect, taperWeights(rect, width, height, o.overlap / 2), width)
  }
  return { mask: fuse(base, near, acc, weight), tiles: runs, planned: tiles.length, kept }
}

function accumulate(
  acc: Float32Array,
  weight: Float32Array,
  near: Uint8Array,
  tile: Mask,
  rect: Rect,
  taper: Float32Array,
  width: number,
): void {
  const w = rectWidth(rect)
  for (let y = 0; y < rectHeight(rect); y++) {
    for (let x = 0; x < w; x++) {
      const i = (rect.y0 + y) * width + rect.x0 + x
      if (!near[i]) continue
      // A floor on the weight: a pixel seen only at a tile's inner side still counts a little.
      const t = Math.max(1e-3, taper[y * w + x])
      acc[i] += t * tile.data[y * w + x]
      weight[i] += t
    }
  }
}

/** Inside the widened band, the tiles' weighted mean, blended by how fully tiles cover the pixel. */
function fuse(base: Mask, near: Uint8Array, acc: Float32Array, weight: Float32Array): Mask {
  const out = new Uint8Array(base.data)
  for (let i = 0; i < out.length; i++) {
    if (!near[i] || weight[i] === 0) continue
    const blend = Math.min(1, weight[i])
    out[i] = Math.round(base.data[i] + blend * (acc[i] / weight[i] - base.data[i]))
  }
  return { data: out, width: base.width, height: base.height }
}
