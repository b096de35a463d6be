/**
 * The geometry of one stroke (semantics in `strokes.ts`): the squared distance d² from each pixel
 * centre of the stroke's box to its polyline, where it is within the radius (`strokes.ts` turns
 * it into coverage, one falloff per pixel; a float32 d² keeps the buffer at 4 bytes a pixel).
 *
 * That distance is the smaller of (a) the perpendicular distance to a segment whose foot lies
 * within it (0 ≤ t ≤ 1) and (b) the distance to a vertex, since a foot outside a segment makes
 * its nearest point an end. (a) is drawn segment by segment, each over its own rectangle
 * (length × 2r) only; (b) row by row from the lower envelope of the vertices' parabolas
 * (Felzenszwalb and Huttenlocher's 1-D distance transform, on real-valued sites). Drawing a disc
 * per vertex instead would cost points × r²: dense points under a large brush would take seconds.
 * Here the work is the stroke's area plus, per row, its number of points.
 */

/** A rectangle of whole pixels, bounds inclusive. */
export interface PixelBox {
  i0: number
  i1: number
  j0: number
  j1: number
}

export interface Brush {
  /** Radius in pixels. */
  r: number
  hardness: number
}

/** Squared distances to a stroke, row-major over `box`; +∞ where beyond its radius. */
export interface Nearest {
  data: Float32Array
  box: PixelBox
}

/** The brush's falloff, shared with the page's live preview (src/contract/brush.ts). */
export { falloff } from '../../../src/contract/brush.js'

/** Where pixel (0, j) of the box would be in its buffer: add i for pixel (i, j). */
const rowBase = ({ box }: Nearest, j: number): number => (j - box.j0) * (box.i1 - box.i0 + 1) - box.i0

/** The pixel columns whose centres lie in [lo, hi], widened a pixel for rounding, within the box. */
const columns = (box: PixelBox, lo: number, hi: number): [number, number] => [
  Math.max(box.i0, Math.ceil(lo - 1.5)),
  Math.min(box.i1, Math.floor(hi + 0.5)),
]

/**
 * The x offsets from `ax` (an interval, or null) of the row at offset `qy` from `ay` where the
 * foot on segment (dx, dy) lies within it and the perpendicular distance is at most r.
 */
function slabRow(qy: number, dx: number, dy: number, len2: number, rLen: number): [number, number] | null {
  let lo = Number.NEGATIVE_INFINITY
  let hi = Number.POSITIVE_INFINITY
  // Foot within the segment: 0 ≤ qx·dx + qy·dy ≤ len².
  if (dx !== 0) {
    const a = (-qy * dy) / dx
    const b = (len2 - qy * dy) / dx
    lo = Math.min(a, b)
    hi = Math.max(a, b)
  } else if (qy * dy < 0 || qy * dy > len2) return null
  // Perpendicular distance: |qx·dy − qy·dx| ≤ r·len.
  if (dy !== 0) {
    const a = (qy * dx - rLen) / dy
    const b = (qy * dx + rLen) / dy
    lo = Math.max(lo, Math.min(a, b))
    hi = Math.min(hi, Math.max(a, b))
  } else if (Math.abs(qy * dx) > rLen) return null
  return lo <= hi ? [lo, hi] : null
}

/** (a): pixels whose foot on segment a→b lies within it, over the segment's rectangle only. */
export function drawSlab(near: Nearest, ax: number, ay: number, bx: number, by: number, { r }: Brush): void {
  const dx = bx - ax
  const dy = by - ay
  const len2 = dx * dx + dy * dy
  if (len2 === 0) return
  const len = Math.sqrt(len2)
  const rLen = r * len
  const r2 = r * r
  // The rectangle's corners are a, b ± r·(−dy, dx)/len: vertically r·|dx|/len beyond the ends.
  const reach = (r * Math.abs(dx)) / len
  const { box, data } = near
  const j0 = Math.max(box.j0, Math.ceil(Math.min(ay, by) - reach - 1.5))
  const j1 = Math.min(box.j1, Math.floor(Math.max(ay, by) + reach + 0.5))
  for (let j = j0; j <= j1; j++) {
    const qy = j + 0.5 - ay
    const row = slabRow(qy, dx, dy, len2, rLen)
    if (!row) continue
    const [i0, i1] = columns(box, ax + row[0], ax + row[1])
    const base = rowBase(near, j)
    for (let i = i0; i <= i1; i++) {
      const qx = i + 0.5 - ax
      const t = (qx * dx + qy * dy) / len2
      if (t < 0 || t > 1) continue
      const ex = qx - t * dx
      const ey = qy - t * dy
      const d2 = ex * ex + ey * ey
      if (d2 <= r2 && d2 < data[base + i]) data[base + i] = d2
    }
  }
}

/**
 * (b): the distance to the nearest vertex, row by row. On a row, vertex q at vertical offset cy
 * is the parabola (x − x_q)² + cy²; their lower envelope gives each pixel its nearest vertex.
 * `xs`, `ys` are the vertices in pixel coordinates.
 */
export function drawVertices(near: Nearest, xs: Float64Array, ys: Float64Array, { r }: Brush): void {
  const n = xs.length
  const r2 = r * r
  // Envelope sites in x order (ties by y, then index: a fixed order, so fixed results).
  const order = Array.from({ length: n }, (_, k) => k).sort((a, b) => xs[a] - xs[b] || ys[a] - ys[b] || a - b)
  const site = new Int32Array(n)
  const offset = new Float64Array(n)
  const from = new Float64Array(n + 1)
  const { box, data } = near
  for (let j = box.j0; j <= box.j1; j++) {
    const py = j + 0.5
    let top = -1
    for (const q of order) {
      const cy = py - ys[q]
      const cq = cy * cy
      if (cq > r2) continue
      top = pushSite(q, cq, top, xs, site, offset, from)
    }
    for (let e = 0; e <= top; e++) {
      const q = site[e]
      const half = Math.sqrt(r2 - offset[e])
      const lo = Math.max(from[e], xs[q] - half)
      const hi = Math.min(e < top ? from[e + 1] : Number.POSITIVE_INFINITY, xs[q] + half)
      const [i0, i1] = columns(box, lo, hi)
      const base = rowBase(near, j)
      for (let i = i0; i <= i1; i++) {
        const ex = i + 0.5 - xs[q]
        const d2 = ex * ex + offset[e]
        if (d2 <= r2 && d2 < data[base + i]) data[base + i] = d2
      }
    }
  }
}

/**
 * Adds site q (x order) to the envelope `site[0..top]`, where `from[e]` is where site e starts
 * being the lowest, dropping the sites it hides. Returns the new top.
 */
function pushSite(
  q: number,
  cq: number,
  top: number,
  xs: Float64Array,
  site: Int32Array,
  offset: Float64Array,
  from: Float64Array,
): number {
  const xq = xs[q]
  while (top >= 0) {
    const xp = xs[site[top]]
    const cp = offset[top]
    if (xq === xp) {
      // Same column of parabolas: the lower offset hides the other everywhere.
      if (cq >= cp) return top
      top--
      continue
    }
    const s = (cq + xq * xq - (cp + xp * xp)) / (2 * (xq - xp))
    if (s <= from[top]) {
      top--
      continue
    }
    top++
    site[top] = q
    offset[top] = cq
    from[top] = s
    return top
  }
  site[0] = q
  offset[0] = cq
  from[0] = Number.NEGATIVE_INFINITY
  return 0
}
