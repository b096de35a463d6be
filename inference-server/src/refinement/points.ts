/**
 * @module
 * What labelled points do to the mask inside the refinement region (DESIGN.md §3 "Refinements",
 * step b, its first half): a background point on an island of foreground (a connected region at
 * ≥ 128 near the point that no foreground point is on) drops the island with its soft fringe; a foreground point on an island of background (a hole)
 * fills it. Regions that continue outside the region are left to the colour cut (grabcut.ts),
 * which can split them. `honourPoints` is the last word: each point's own pixel ends on its side.
 */
import { label, touchingSides } from './components.js'

/** A point in plane coordinates (the region's), with its label. */
export interface PlanePoint {
  x: number
  y: number
  foreground: boolean
}

/** The region's sides that meet mask it may not change. */
export interface InnerSides {
  left: boolean
  top: boolean
  right: boolean
  bottom: boolean
}

/** A binary plane grown by `r` pixels (square window), by separable running maxima. */
export function dilate(plane: Uint8Array, width: number, height: number, r: number): Uint8Array {
  const tmp = new Uint8Array(plane.length)
  const out = new Uint8Array(plane.length)
  for (let y = 0; y < height; y++) {
    let last = Number.NEGATIVE_INFINITY
    // Forward then backward pass per row: distance to the nearest set pixel either way.
    for (let x = 0; x < width; x++) {
      if (plane[y * width + x]) last = x
      if (x - last <= r) tmp[y * width + x] = 1
    }
    last = Number.POSITIVE_INFINITY
    for (let x = width - 1; x >= 0; x--) {
      if (plane[y * width + x]) last = x
      if (last - x <= r) tmp[y * width + x] = 1
    }
  }
  for (let x = 0; x < width; x++) {
    let last = Number.NEGATIVE_INFINITY
    for (let y = 0; y < height; y++) {
      if (tmp[y * width + x]) last = y
      if (y - last <= r) out[y * width + x] = 1
    }
    last = Number.POSITIVE_INFINITY
    for (let y = height - 1; y >= 0; y--) {
      if (tmp[y * width + x]) last = y
      if (last - y <= r) out[y * width + x] = 1
    }
  }
  return out
}

/**
 * Where the zoomed look and the base disagree (one says ≥ 128, the other not), a point settles it
 * for the whole connected area it lands on: the area takes the base's values when the base is on
 * the point's side. A tight crop can make the model take another thing in it for the subject; a
 * foreground point on what it lost brings the base's answer back, a background point on what it
 * wrongly added takes it away again. Areas no point lands on keep the zoomed look (the better one
 * on the benchmark). Each taken area carries its soft edge (`fringe` px) with it. In place.
 */
export function settleDisagreements(
  plane: Uint8Array,
  base: Uint8Array,
  width: number,
  height: number,
  points: PlanePoint[],
  fringe: number,
): void {
  const differ = plane.map((v, i) => (v >= 128 !== base[i] >= 128 ? 1 : 0))
  const parts = label(differ, width, height)
  const vote = new Int8Array(parts.count + 1)
  for (const p of points) {
    const c = parts.labels[p.y * width + p.x]
    if (!c) continue
    const baseAgrees = base[p.y * width + p.x] >= 128 === p.foreground
    // Points that disagree with each other about one area cancel out: neither look is taken from them.
    vote[c] = vote[c] === 0 || vote[c] === (baseAgrees ? 1 : -1) ? (baseAgrees ? 1 : -1) : 2
  }
  const take = new Uint8Array(plane.length)
  let any = false
  for (let i = 0; i < plane.length; i++) {
    if (vote[parts.labels[i]] === 1) {
      take[i] = 1
      any = true
    }
  }
  if (!any) return
  const near = dilate(take, width, height, fringe)
  for (let i = 0; i < plane.length; i++) if (near[i]) plane[i] = base[i]
}

/** A window of the plane: half-open pixel bounds. */
interface Window {
  x0: number
  y0: number
  x1: number
  y1: number
}

/**
 * The island under `p` inside `win`, as plane indices: the connected region of pixels on the
 * side `p` says is wrong, when it stays inside the window (touches none of its inner sides) and no
 * point of its own side is on it. Empty otherwise.
 */
function islandAt(
  plane: Uint8Array,
  width: number,
  win: Window,
  inner: InnerSides,
  p: PlanePoint,
  points: PlanePoint[],
) {
  const w = win.x1 - win.x0
  const h = win.y1 - win.y0
  const wrong = new Uint8Array(w * h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++)
      wrong[y * w + x] = plane[(win.y0 + y) * width + win.x0 + x] >= 128 !== p.foreground ? 1 : 0
  }
  const parts = label(wrong, w, h)
  const c = parts.labels[(p.y - win.y0) * w + (p.x - win.x0)]
  if (!c || touchingSides(parts, w, h, inner)[c]) return []
  const inWindow = (q: PlanePoint) => q.x >= win.x0 && q.x < win.x1 && q.y >= win.y0 && q.y < win.y1
  if (
    points.some(
      (q) => q.foreground !== p.foreground && inWindow(q) && parts.labels[(q.y - win.y0) * w + (q.x - win.x0)] === c,
    )
  ) {
    return []
  }
  const island: number[] = []
  for (let i = 0; i < parts.labels.length; i++) {
    if (parts.labels[i] === c) island.push((win.y0 + Math.floor(i / w)) * width + win.x0 + (i % w))
  }
  return island
}

/**
 * Drops foreground islands under background points and fills background islands under
 * foreground points, in place. Each point looks only within `reach` pixels of itself: a region
 * that runs further is not an island (it may be the subject itself, joined to what the point is
 * on) and is left to the colour cut. An island goes with its soft edge: the pixels within
 * `fringe` of it that lean its way (a foreground island's faint halo, a hole's half-opaque rim).
 */
export function applyIslands(
  plane: Uint8Array,
  width: number,
  height: number,
  points: PlanePoint[],
  sides: InnerSides,
  { reach, fringe }: { reach: number; fringe: number },
): void {
  for (const p of points) {
    const win = {
      x0: Math.max(0, p.x - reach),
      y0: Math.max(0, p.y - reach),
      x1: Math.min(width, p.x + reach + 1),
      y1: Math.min(height, p.y + reach + 1),
    }
    // A window side is inner unless it lies on a plane side that meets nothing (the image's edge).
    const inner = {
      left: win.x0 > 0 || sides.left,
      top: win.y0 > 0 || sides.top,
      right: win.x1 < width || sides.right,
      bottom: win.y1 < height || sides.bottom,
    }
    const island = islandAt(plane, width, win, inner, p, points)
    if (island.length) dropIsland(plane, width, height, island, p.foreground, fringe)
  }
}

/** Sets `island` (plane indices) and the pixels within `fringe` of it that lean its way to the point's side. */
function dropIsland(
  plane: Uint8Array,
  width: number,
  height: number,
  island: number[],
  foreground: boolean,
  fringe: number,
) {
  // Work in the island's bounding box grown by the fringe, not the whole plane.
  let [x0, y0, x1, y1] = [width, height, 0, 0]
  for (const i of island) {
    const x = i % width
    const y = Math.floor(i / width)
    ;[x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x + 1), Math.max(y1, y + 1)]
  }
  ;[x0, y0] = [Math.max(0, x0 - fringe), Math.max(0, y0 - fringe)]
  ;[x1, y1] = [Math.min(width, x1 + fringe), Math.min(height, y1 + fringe)]
  const w = x1 - x0
  const core = new Uint8Array(w * (y1 - y0))
  for (const i of island) core[(Math.floor(i / width) - y0) * w + (i % width) - x0] = 1
  const near = dilate(core, w, y1 - y0, fringe)
  const value = foreground ? 255 : 0
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = y * width + x
      const k = (y - y0) * w + x - x0
      // The halo: a foreground island's pixels above 8, a hole's below 247.
      if (core[k] || (near[k] && (foreground ? plane[i] < 247 : plane[i] > 8))) plane[i] = value
    }
  }
}

/**
 * Makes each point's pixel (and a disc of `radius` around it) end on its side: ≥ 128 for
 * foreground, ≤ 127 for background; pixels already on that side keep their value. A later point
 * wins where two discs overlap; the point's own pixel is set last so it always holds.
 */
export function honourPoints(plane: Uint8Array, width: number, height: number, points: PlanePoint[], radius: number) {
  const set = (i: number, foreground: boolean) => {
    if (foreground && plane[i] < 128) plane[i] = 255
    if (!foreground && plane[i] > 127) plane[i] = 0
  }
  for (const p of points) {
    for (let y = Math.max(0, p.y - radius); y <= Math.min(height - 1, p.y + radius); y++) {
      for (let x = Math.max(0, p.x - radius); x <= Math.min(width - 1, p.x + radius); x++) {
        if ((x - p.x) ** 2 + (y - p.y) ** 2 <= radius * radius) set(y * width + x, p.foreground)
      }
    }
  }
  for (const p of points) set(p.y * width + p.x, p.foreground)
}
