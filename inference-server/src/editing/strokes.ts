/**
 * Brush strokes rasterised onto a mask (SPEC.md §4 "Projects and editing": strokes are normalised
 * to the source so they rasterise deterministically at its resolution). For a W×H mask:
 *
 * - a point [x, y] is at pixel coordinates (x·W, y·H); pixel (i, j) is sampled at its centre
 *   (i + 0.5, j + 0.5);
 * - the brush diameter is `size`·max(W, H), so its radius r = max(0.5, size·max(W, H) / 2);
 * - a stroke is the polyline through its points (one point is a dot). Its strength at a pixel is
 *   a = opacity·falloff(d / r), d the distance from the pixel centre to the polyline, with
 *   falloff(t) = 1 for t ≤ hardness, 0 for t ≥ 1, and between them the smoothstep
 *   1 − s²(3 − 2s), s = (t − hardness) / (1 − hardness);
 * - within a stroke the nearest segment decides (the max over segments), so where consecutive
 *   dabs overlap nothing builds up;
 * - `restore`: m ← round(m + (255 − m)·a); `erase`: m ← round(m·(1 − a)); strokes apply in order,
 *   each rounded to 8 bits before the next.
 *
 * Only +, −, ×, ÷ and √ are used, all exactly rounded in IEEE 754, so every machine computes the
 * same bytes. Each stroke touches only its bounding box (and each segment only the rows and
 * columns its capsule can reach), so a few strokes on a 12 MP mask cost milliseconds.
 */
import type { Stroke } from '../../../src/contract/editing.js'
import type { Mask } from '../imaging/types.js'

/** A rectangle of whole pixels, bounds inclusive. */
interface PixelBox {
  i0: number
  i1: number
  j0: number
  j1: number
}

/** Full strength up to `hardness` of the radius, then a smoothstep down to 0 at the radius. */
export function falloff(t: number, hardness: number): number {
  if (t <= hardness) return 1
  if (t >= 1) return 0
  const s = (t - hardness) / (1 - hardness)
  return 1 - s * s * (3 - 2 * s)
}

/** The brush radius in pixels of a stroke of `size` on a W×H mask. */
export const brushRadius = (size: number, width: number, height: number): number =>
  Math.max(0.5, (size * Math.max(width, height)) / 2)

/** The pixels whose centres can lie within `r` of the points, clipped to the mask; null when none. */
function strokeBox(xy: Float64Array, r: number, width: number, height: number): PixelBox | null {
  let minX = Number.POSITIVE_INFINITY
  let minY = Number.POSITIVE_INFINITY
  let maxX = Number.NEGATIVE_INFINITY
  let maxY = Number.NEGATIVE_INFINITY
  for (let k = 0; k < xy.length; k += 2) {
    minX = Math.min(minX, xy[k])
    maxX = Math.max(maxX, xy[k])
    minY = Math.min(minY, xy[k + 1])
    maxY = Math.max(maxY, xy[k + 1])
  }
  const box = {
    i0: Math.max(0, Math.ceil(minX - r - 0.5)),
    i1: Math.min(width - 1, Math.floor(maxX + r - 0.5)),
    j0: Math.max(0, Math.ceil(minY - r - 0.5)),
    j1: Math.min(height - 1, Math.floor(maxY + r - 0.5)),
  }
  return box.i0 > box.i1 || box.j0 > box.j1 ? null : box
}

/**
 * Raises `cover` (the stroke box's falloff, row-major) to the falloff of segment a→b wherever
 * that is higher. Per row, only the columns the capsule can reach are visited: the segment's
 * part within `r` of the row, widened by `r`.
 */
function drawSegment(
  cover: Float32Array,
  box: PixelBox,
  seg: { ax: number; ay: number; bx: number; by: number },
  r: number,
  hardness: number,
): void {
  const { ax, ay, bx, by } = seg
  const dx = bx - ax
  const dy = by - ay
  const len2 = dx * dx + dy * dy
  const r2 = r * r
  const stride = box.i1 - box.i0 + 1
  const j0 = Math.max(box.j0, Math.ceil(Math.min(ay, by) - r - 0.5))
  const j1 = Math.min(box.j1, Math.floor(Math.max(ay, by) + r - 0.5))
  for (let j = j0; j <= j1; j++) {
    const py = j + 0.5
    let t0 = 0
    let t1 = 1
    if (dy !== 0) {
      const ta = (py - r - ay) / dy
      const tb = (py + r - ay) / dy
      t0 = Math.max(0, Math.min(ta, tb))
      t1 = Math.min(1, Math.max(ta, tb))
      if (t0 > t1) continue
    }
    const xa = ax + t0 * dx
    const xb = ax + t1 * dx
    const i0 = Math.max(box.i0, Math.ceil(Math.min(xa, xb) - r - 0.5))
    const i1 = Math.min(box.i1, Math.floor(Math.max(xa, xb) + r - 0.5))
    const row = (j - box.j0) * stride - box.i0
    const qy = py - ay
    for (let i = i0; i <= i1; i++) {
      const qx = i + 0.5 - ax
      let t = len2 === 0 ? 0 : (qx * dx + qy * dy) / len2
      t = t < 0 ? 0 : t > 1 ? 1 : t
      const ex = qx - t * dx
      const ey = qy - t * dy
      const d2 = ex * ex + ey * ey
      if (d2 > r2) continue
      const f = falloff(Math.sqrt(d2) / r, hardness)
      if (f > cover[row + i]) cover[row + i] = f
    }
  }
}

/** Blends one stroke's coverage into the mask, rounding each pixel to 8 bits. */
function blend(mask: Mask, cover: Float32Array, box: PixelBox, tool: Stroke['tool'], opacity: number): void {
  const { data, width } = mask
  const stride = box.i1 - box.i0 + 1
  for (let j = box.j0; j <= box.j1; j++) {
    const row = (j - box.j0) * stride
    for (let i = box.i0; i <= box.i1; i++) {
      const c = cover[row + i - box.i0]
      if (c === 0) continue
      const a = opacity * c
      const k = j * width + i
      const m = data[k]
      data[k] = Math.round(tool === 'restore' ? m + (255 - m) * a : m * (1 - a))
    }
  }
}

/**
 * Applies `strokes` in order to `mask`, in place, and returns it.
 * @example applyStrokes(mask, [{ tool: 'restore', points: [[0.5, 0.5]], size: 0.05, hardness: 1, opacity: 1 }])
 */
export function applyStrokes(mask: Mask, strokes: readonly Stroke[]): Mask {
  const { width, height } = mask
  let cover = new Float32Array(0)
  for (const stroke of strokes) {
    const r = brushRadius(stroke.size, width, height)
    const xy = new Float64Array(stroke.points.length * 2)
    stroke.points.forEach(([x, y], k) => {
      xy[2 * k] = x * width
      xy[2 * k + 1] = y * height
    })
    const box = strokeBox(xy, r, width, height)
    if (!box || stroke.opacity === 0) continue
    const area = (box.i1 - box.i0 + 1) * (box.j1 - box.j0 + 1)
    // One buffer for every stroke, grown to the largest box seen.
    if (cover.length < area) cover = new Float32Array(area)
    else cover.fill(0, 0, area)
    const last = Math.max(0, xy.length / 2 - 2)
    for (let k = 0; k <= last; k++) {
      // A single point is a segment from itself to itself.
      const b = Math.min(k + 1, xy.length / 2 - 1)
      const seg = { ax: xy[2 * k], ay: xy[2 * k + 1], bx: xy[2 * b], by: xy[2 * b + 1] }
      drawSegment(cover, box, seg, r, stroke.hardness)
    }
    blend(mask, cover, box, stroke.tool, stroke.opacity)
  }
  return mask
}
