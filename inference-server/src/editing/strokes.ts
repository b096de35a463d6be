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
 * same bytes. Each stroke touches only its bounding box (`coverage.ts` says how the distances
 * are found without points × r² work), so a few strokes on a 12 MP mask cost milliseconds. A
 * request whose strokes would still take seconds (thousands of points under brushes the size of
 * the image) is refused up front by `checkStrokeWork`, as the rasterising blocks the event loop.
 */
import type { ReviseRequest, Stroke } from '../../../src/contract/editing.js'
import { InferenceError } from '../errors.js'
import type { Mask } from '../imaging/types.js'
import { type Brush, drawSlab, drawVertices, falloff, type Nearest, type PixelBox } from './coverage.js'

export { falloff }

/**
 * Rasterising work a request may ask for, in pixel visits plus per-row vertex scans: 2–4 s on
 * one core here (10,000 points under a brush a third of the image wide take half of it); a
 * revision's few strokes take a few million.
 */
export const MAX_STROKE_WORK = 400_000_000

/** The brush radius in pixels of a stroke of `size` on a W×H mask. */
export const brushRadius = (size: number, width: number, height: number): number =>
  Math.max(0.5, (size * Math.max(width, height)) / 2)

/** A stroke in pixel coordinates: its vertices, radius and the pixels it can reach. */
interface PixelStroke {
  xs: Float64Array
  ys: Float64Array
  r: number
  box: PixelBox | null
}

function toPixels(stroke: Stroke, width: number, height: number): PixelStroke {
  const n = stroke.points.length
  const xs = new Float64Array(n)
  const ys = new Float64Array(n)
  stroke.points.forEach(([x, y], k) => {
    xs[k] = x * width
    ys[k] = y * height
  })
  const r = brushRadius(stroke.size, width, height)
  let [minX, maxX, minY, maxY] = [xs[0], xs[0], ys[0], ys[0]]
  for (let k = 1; k < n; k++) {
    minX = Math.min(minX, xs[k])
    maxX = Math.max(maxX, xs[k])
    minY = Math.min(minY, ys[k])
    maxY = Math.max(maxY, ys[k])
  }
  // Pixels whose centres can lie within r of a point, clipped to the mask.
  const box = {
    i0: Math.max(0, Math.ceil(minX - r - 0.5)),
    i1: Math.min(width - 1, Math.floor(maxX + r - 0.5)),
    j0: Math.max(0, Math.ceil(minY - r - 0.5)),
    j1: Math.min(height - 1, Math.floor(maxY + r - 0.5)),
  }
  return { xs, ys, r, box: box.i0 > box.i1 || box.j0 > box.j1 ? null : box }
}

/** An upper estimate of one stroke's work: vertex scans per row, the vertex sweep, the slabs. */
function workOf({ xs, ys, r, box }: PixelStroke): number {
  if (!box) return 0
  const rows = box.j1 - box.j0 + 1
  const area = rows * (box.i1 - box.i0 + 1)
  let slabs = 0
  for (let k = 1; k < xs.length; k++) {
    const len = Math.hypot(xs[k] - xs[k - 1], ys[k] - ys[k - 1])
    slabs += Math.min(area, (len + 2) * (2 * r + 2))
  }
  return rows * xs.length + area + slabs
}

/**
 * Refuses a revision whose strokes would take more than `MAX_STROKE_WORK` to rasterise.
 * @throws {InferenceError} `invalid_input`
 */
export function checkStrokeWork({ width, height, strokes }: ReviseRequest): void {
  let work = 0
  for (const stroke of strokes) work += workOf(toPixels(stroke, width, height))
  if (work > MAX_STROKE_WORK) {
    throw new InferenceError(
      'invalid_input',
      `Expected strokes that rasterise in at most ${MAX_STROKE_WORK} steps but these take about ${Math.round(work)}: use fewer points or smaller brushes`,
    )
  }
}

/** Blends one stroke into the mask by its distances, rounding each pixel to 8 bits. */
function blend(mask: Mask, { data: near, box }: Nearest, { r, hardness }: Brush, stroke: Stroke): void {
  const { data, width } = mask
  const { tool, opacity } = stroke
  const stride = box.i1 - box.i0 + 1
  for (let j = box.j0; j <= box.j1; j++) {
    const row = (j - box.j0) * stride
    for (let i = box.i0; i <= box.i1; i++) {
      const d2 = near[row + i - box.i0]
      if (d2 === Number.POSITIVE_INFINITY) continue
      const a = opacity * falloff(Math.sqrt(d2) / r, hardness)
      if (a === 0) continue
      const k = j * width + i
      const m = data[k]
      data[k] = Math.round(tool === 'restore' ? m + (255 - m) * a : m * (1 - a))
    }
  }
}

/** Rasterises one stroke and blends it in; `scratch` is a buffer reused across strokes. */
function applyStroke(mask: Mask, stroke: Stroke, scratch: { buffer: Float32Array }): void {
  const { xs, ys, r, box } = toPixels(stroke, mask.width, mask.height)
  if (!box || stroke.opacity === 0) return
  const area = (box.i1 - box.i0 + 1) * (box.j1 - box.j0 + 1)
  if (scratch.buffer.length < area) scratch.buffer = new Float32Array(area)
  scratch.buffer.fill(Number.POSITIVE_INFINITY, 0, area)
  const near = { data: scratch.buffer, box }
  const brush = { r, hardness: stroke.hardness }
  drawVertices(near, xs, ys, brush)
  for (let k = 1; k < xs.length; k++) drawSlab(near, xs[k - 1], ys[k - 1], xs[k], ys[k], brush)
  blend(mask, near, brush, stroke)
}

/** Time between turns of the event loop while rasterising, so readiness and refusals still answer. */
const YIELD_MS = 50

/**
 * Applies `strokes` in order to `mask`, in place, and returns it.
 * @example await applyStrokes(mask, [{ tool: 'restore', points: [[0.5, 0.5]], size: 0.05, hardness: 1, opacity: 1 }])
 */
export async function applyStrokes(mask: Mask, strokes: readonly Stroke[]): Promise<Mask> {
  // One buffer for every stroke, grown to the largest box seen.
  const scratch = { buffer: new Float32Array(0) }
  let since = performance.now()
  for (const stroke of strokes) {
    applyStroke(mask, stroke, scratch)
    if (performance.now() - since > YIELD_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      since = performance.now()
    }
  }
  return mask
}
