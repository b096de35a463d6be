/**
 * @module
 * Where `high`'s close-up tiles go (edge-tiles.ts). Every tile costs a model run, so the layout
 * decides the level's price. A fixed grid pays for every cell the subject's outline passes
 * through, however little of the band a cell holds; the cover layout instead places tiles where
 * the band is: greedily, each where it covers the most band pixels not yet covered, or by sweeps
 * along rows or columns (better on a band filling much of the frame), whichever takes fewest,
 * until the band is covered or what is left would not pay for a run.
 *
 * A tile "covers" a pixel when the pixel lies in its core: the tile without the part of the taper
 * at its inner sides (half the overlap) where the fusion's weight is below `coverWeight`. At weight
 * 1 every covered band pixel is fully replaced by close-ups, as on the grid, whose overlap gives
 * the same guarantee; at ½ neighbouring tiles may overlap by one taper rather than two (coreInset).
 */
import type { Rect } from '../refinement/region.js'

export interface LayoutOptions {
  /** Tile side in source pixels. */
  tile: number
  /** The fusion tapers each tile over half of this at its inner sides. */
  overlap: number
  /** Stop adding tiles once the best one would cover fewer band pixels than this. */
  minBandPixels: number
  /** A tile covers a pixel where its fusion weight is at least this (0 < w ≤ 1; see `coreInset`). */
  coverWeight: number
}

/** Tile origins along one axis: evenly spread, `tile` long, overlapping by at least `overlap`. */
function origins(size: number, tile: number, overlap: number): number[] {
  if (tile >= size) return [0]
  const count = Math.ceil((size - overlap) / (tile - overlap))
  return Array.from({ length: count }, (_, i) => Math.round((i * (size - tile)) / (count - 1)))
}

/**
 * The tiles of a grid over the image that contain any of `band`: the layout before the cover one,
 * and still the one a band filling the frame gets (edge-tiles.ts planTiles).
 * @example gridTiles(band, 4240, 2832, 1024, 128).length // up to 20: the cells the outline crosses
 */
export function gridTiles(band: Uint8Array, width: number, height: number, tile: number, overlap: number): Rect[] {
  const tw = Math.min(tile, width)
  const th = Math.min(tile, height)
  const out: Rect[] = []
  for (const y0 of origins(height, th, overlap)) {
    for (const x0 of origins(width, tw, overlap)) {
      const rect = { x0, y0, x1: x0 + tw, y1: y0 + th }
      if (touches(band, width, rect)) out.push(rect)
    }
  }
  return out
}

function touches(band: Uint8Array, width: number, r: Rect): boolean {
  for (let y = r.y0; y < r.y1; y++) {
    const row = y * width
    for (let x = r.x0; x < r.x1; x++) if (band[row + x]) return true
  }
  return false
}

/**
 * How far inside a tile's inner side its fusion weight reaches `weight`: the fusion tapers each
 * inner side over `taper` pixels by smoothstep s(t) = t²(3 − 2t), whose inverse is
 * t = ½ − sin(asin(1 − 2w) / 3). Weight ½ is enough: s(t) + s(1 − t) = 1, so two tiles whose
 * half-weight lines meet still give the pixels between them full weight together; a band pixel
 * reached by one tile alone there gets half the close-up and half the base.
 * @example coreInset(64, 1) // 64; coreInset(64, 0.5) // 32
 */
export function coreInset(taper: number, weight: number): number {
  const w = Math.min(1, Math.max(0, weight))
  return Math.max(0, Math.ceil(taper * (0.5 - Math.sin(Math.asin(1 - 2 * w) / 3)) - 1e-9))
}

/** The part of `rect` a layout counts as covered: inner sides lose `inset` pixels (coreInset). */
export function tileCore(rect: Rect, width: number, height: number, inset: number): Rect {
  return {
    x0: rect.x0 > 0 ? rect.x0 + inset : 0,
    y0: rect.y0 > 0 ? rect.y0 + inset : 0,
    x1: rect.x1 < width ? rect.x1 - inset : width,
    y1: rect.y1 < height ? rect.y1 - inset : height,
  }
}

/**
 * Coarse cells (CELL² source pixels) keep the search cheap: a 12 MP band is ~47 000 cells and
 * tile positions step by one cell, far finer than a 1024 px tile needs.
 */
const CELL = 16

/** Band pixels per cell, and how the image maps onto cells. */
interface Cells {
  counts: Float64Array
  cols: number
  rows: number
  width: number
  height: number
}

function toCells(band: Uint8Array, width: number, height: number): Cells {
  const cols = Math.ceil(width / CELL)
  const rows = Math.ceil(height / CELL)
  const counts = new Float64Array(cols * rows)
  for (let y = 0; y < height; y++) {
    const row = y * width
    const c = ((y / CELL) | 0) * cols
    for (let x = 0; x < width; x++) if (band[row + x]) counts[c + ((x / CELL) | 0)]++
  }
  return { counts, cols, rows, width, height }
}

/** A rect in cell units: the cells lying wholly inside a pixel rect (a partial cell at the image's edge counts). */
function cellsInside(r: Rect, g: Cells): Rect {
  const hi = (px: number, size: number, n: number) => (px >= size ? n : Math.floor(px / CELL))
  return {
    x0: Math.ceil(r.x0 / CELL),
    y0: Math.ceil(r.y0 / CELL),
    x1: hi(r.x1, g.width, g.cols),
    y1: hi(r.y1, g.height, g.rows),
  }
}

/** Summed-area table of `values` over the cell grid, (cols + 1) × (rows + 1). */
function summed(values: Float64Array, cols: number, rows: number): Float64Array {
  const s = new Float64Array((cols + 1) * (rows + 1))
  for (let y = 0; y < rows; y++) {
    let run = 0
    for (let x = 0; x < cols; x++) {
      run += values[y * cols + x]
      s[(y + 1) * (cols + 1) + x + 1] = s[y * (cols + 1) + x + 1] + run
    }
  }
  return s
}

function sumIn(s: Float64Array, cols: number, r: Rect): number {
  if (r.x1 <= r.x0 || r.y1 <= r.y0) return 0
  const w = cols + 1
  return s[r.y1 * w + r.x1] - s[r.y0 * w + r.x1] - s[r.y1 * w + r.x0] + s[r.y0 * w + r.x0]
}

/** Candidate origins along one axis: every cell step, and the last position flush with the far side. */
function positions(size: number, tile: number): number[] {
  const out: number[] = []
  for (let p = 0; p < size - tile; p += CELL) out.push(p)
  out.push(Math.max(0, size - tile))
  return out
}

/** Sums of the uncovered band, and of its x and y, per cell: for a tile's gain and its band's centre. */
interface Tables {
  n: Float64Array
  x: Float64Array
  y: Float64Array
}

function tables(g: Cells): Tables {
  const xs = new Float64Array(g.counts.length)
  const ys = new Float64Array(g.counts.length)
  for (let i = 0; i < xs.length; i++) {
    xs[i] = g.counts[i] * (i % g.cols)
    ys[i] = g.counts[i] * Math.floor(i / g.cols)
  }
  return { n: summed(g.counts, g.cols, g.rows), x: summed(xs, g.cols, g.rows), y: summed(ys, g.cols, g.rows) }
}

interface Candidate {
  rect: Rect
  cells: Rect
  gain: number
  /** Squared distance (cells) from the core's centre to the centre of the band it would cover. */
  offCentre: number
}

/** Where tiles may go and what they must contain. */
interface Search {
  xs: number[]
  ys: number[]
  tw: number
  th: number
  /** How far inside its inner sides a tile covers nothing (coreInset). */
  inset: number
  /** A cell the tile's core must contain (the sweep's anchor). */
  anchor?: { x: number; y: number }
}

const holds = (r: Rect, x: number, y: number) => x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1

/**
 * The tile covering the most uncovered band; among equals, the one whose core is best centred on
 * that band, so the crop shows the edge with context on both sides rather than at its rim.
 */
function bestTile(g: Cells, t: Tables, s: Search): Candidate | undefined {
  let best: Candidate | undefined
  for (const y0 of s.ys) {
    for (const x0 of s.xs) {
      const rect = { x0, y0, x1: x0 + s.tw, y1: y0 + s.th }
      const cells = cellsInside(tileCore(rect, g.width, g.height, s.inset), g)
      if (s.anchor && !holds(cells, s.anchor.x, s.anchor.y)) continue
      const gain = sumIn(t.n, g.cols, cells)
      if (gain === 0 || (best && gain < best.gain)) continue
      const cx = sumIn(t.x, g.cols, cells) / gain + 0.5 - (cells.x0 + cells.x1) / 2
      const cy = sumIn(t.y, g.cols, cells) / gain + 0.5 - (cells.y0 + cells.y1) / 2
      const offCentre = cx * cx + cy * cy
      if (!best || gain > best.gain || offCentre < best.offCentre) best = { rect, cells, gain, offCentre }
    }
  }
  return best
}

function clearCells(g: Cells, r: Rect): void {
  for (let y = r.y0; y < r.y1; y++) g.counts.fill(0, y * g.cols + r.x0, y * g.cols + r.x1)
}

function search(g: Cells, o: LayoutOptions): Search {
  const tw = Math.min(o.tile, g.width)
  const th = Math.min(o.tile, g.height)
  return {
    xs: positions(g.width, tw),
    ys: positions(g.height, th),
    tw,
    th,
    inset: coreInset(o.overlap / 2, o.coverWeight),
  }
}

/** Greedy set cover: each tile where it covers the most of what is left. */
function greedy(g: Cells, o: LayoutOptions): Candidate[] {
  const s = search(g, o)
  const out: Candidate[] = []
  for (;;) {
    const best = bestTile(g, tables(g), s)
    if (!best || best.gain < Math.max(1, o.minBandPixels)) return out
    out.push(best)
    clearCells(g, best.cells)
  }
}

/**
 * A sweep, row by row: the first uncovered band cell fixes the next tile's core's top side, and
 * along that row the tile goes where it covers the most. On a band that fills much of the image
 * (a lattice, smoke) this packs tiles like a grid, where the plain greedy leaves slivers that each
 * need a tile of their own.
 */
function sweep(g: Cells, o: LayoutOptions): Candidate[] {
  const s = search(g, o)
  const out: Candidate[] = []
  for (let i = g.counts.findIndex((v) => v > 0); i >= 0; i = g.counts.findIndex((v) => v > 0)) {
    const anchor = { x: i % g.cols, y: Math.floor(i / g.cols) }
    const y0 = Math.min(g.height - s.th, Math.max(0, anchor.y * CELL - s.inset))
    const best = bestTile(g, tables(g), { ...s, ys: [y0], anchor })
    // A cell no tile can hold whole cannot happen with cores wider than a cell; stop rather than spin.
    if (!best) return out
    if (best.gain >= Math.max(1, o.minBandPixels)) out.push(best)
    clearCells(g, best.cells)
  }
  return out
}

/** Drops tiles whose band cells all lie in other tiles' cores (the greedy's early picks often end so). */
function prune(counts: Float64Array, cols: number, tiles: Candidate[]): Candidate[] {
  const kept = [...tiles]
  for (let k = kept.length - 1; k >= 0; k--) {
    const others = kept.filter((_, j) => j !== k)
    const c = kept[k].cells
    let needed = false
    for (let y = c.y0; y < c.y1 && !needed; y++)
      for (let x = c.x0; x < c.x1 && !needed; x++)
        needed = counts[y * cols + x] > 0 && !others.some((t) => holds(t.cells, x, y))
    if (!needed) kept.splice(k, 1)
  }
  return kept
}

/** The same cells with x and y swapped, so a row sweep can run down the columns. */
function transposed(g: Cells): Cells {
  const counts = new Float64Array(g.counts.length)
  for (let y = 0; y < g.rows; y++) for (let x = 0; x < g.cols; x++) counts[x * g.rows + y] = g.counts[y * g.cols + x]
  return { counts, cols: g.rows, rows: g.cols, width: g.height, height: g.width }
}

const swap = (r: Rect): Rect => ({ x0: r.y0, y0: r.x0, x1: r.y1, y1: r.x1 })

/**
 * Tiles placed where the band is (see the module comment): the fewest of a greedy cover and a
 * sweep along rows and along columns. Every band pixel ends in some tile's core unless the tiles
 * left to place would each cover fewer than `minBandPixels`.
 * @example coverTiles(near, 4240, 2832, { tile: 1024, overlap: 128, minBandPixels: 0, coverWeight: 1 }).length // ≤ the grid's on an outline
 */
export function coverTiles(band: Uint8Array, width: number, height: number, o: LayoutOptions): Rect[] {
  const g = toCells(band, width, height)
  const copy = (): Cells => ({ ...g, counts: g.counts.slice() })
  const t = transposed(g)
  const layouts = [
    prune(g.counts, g.cols, greedy(copy(), o)).map((c) => c.rect),
    prune(g.counts, g.cols, sweep(copy(), o)).map((c) => c.rect),
    prune(t.counts, t.cols, sweep({ ...t, counts: t.counts.slice() }, o)).map((c) => swap(c.rect)),
  ]
  return layouts.reduce((a, b) => (b.length < a.length ? b : a))
}
