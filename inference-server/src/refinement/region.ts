/**
 * @module
 * Where a refinement may change the mask (DESIGN.md §3 "Refinements"): the box, or the points'
 * bounding box plus a margin, in source pixels and clamped to the image. Every pixel outside this
 * rectangle stays byte-identical to the base mask, so the rectangle is computed in one place and
 * every step writes only inside it.
 */
import type { Box, RefinementPoint } from '../../../src/contract/editing.js'

/** A pixel rectangle, half-open: x0 ≤ x < x1, y0 ≤ y < y1. */
export interface Rect {
  x0: number
  y0: number
  x1: number
  y1: number
}

/** A labelled point in source pixels. */
export interface PixelPoint {
  x: number
  y: number
  foreground: boolean
}

/** Margin around points (with no box to say how far the fix reaches): a tenth of the longer side, at least this. */
export const POINT_MARGIN_FRACTION = 0.1
export const MIN_POINT_MARGIN = 32

/** How far points reach: the margin around points, and how far one looks for the island it is on. */
export const pointMargin = (width: number, height: number): number =>
  Math.max(MIN_POINT_MARGIN, Math.round(POINT_MARGIN_FRACTION * Math.max(width, height)))

export const rectWidth = (r: Rect): number => r.x1 - r.x0
export const rectHeight = (r: Rect): number => r.y1 - r.y0
export const inRect = (r: Rect, x: number, y: number): boolean => x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1

/**
 * The pixel a normalised point names: the one it falls in (x = 1 is the last column).
 * @example toPixel({ x: 0.5, y: 1, label: 'foreground' }, 100, 80) // { x: 50, y: 79, foreground: true }
 */
export function toPixel(point: RefinementPoint, width: number, height: number): PixelPoint {
  return {
    x: Math.min(width - 1, Math.floor(point.x * width)),
    y: Math.min(height - 1, Math.floor(point.y * height)),
    foreground: point.label === 'foreground',
  }
}

/** The pixels a normalised box covers, at least one pixel each way (the schema already keeps it inside the image). */
export function boxRect(box: Box, width: number, height: number): Rect {
  const x0 = Math.min(width - 1, Math.floor(box.x * width))
  const y0 = Math.min(height - 1, Math.floor(box.y * height))
  // The schema allows x + width up to 1 + 1e-9: ceil of that float may step one past the edge.
  const x1 = Math.max(x0 + 1, Math.min(width, Math.ceil((box.x + box.width) * width - 1e-6)))
  const y1 = Math.max(y0 + 1, Math.min(height, Math.ceil((box.y + box.height) * height - 1e-6)))
  return { x0, y0, x1, y1 }
}

/** `r` grown by `margin` on every side, clamped to the image. */
export function grow(r: Rect, margin: number, width: number, height: number): Rect {
  return {
    x0: Math.max(0, r.x0 - margin),
    y0: Math.max(0, r.y0 - margin),
    x1: Math.min(width, r.x1 + margin),
    y1: Math.min(height, r.y1 + margin),
  }
}

const union = (a: Rect, b: Rect): Rect => ({
  x0: Math.min(a.x0, b.x0),
  y0: Math.min(a.y0, b.y0),
  x1: Math.max(a.x1, b.x1),
  y1: Math.max(a.y1, b.y1),
})

/**
 * The region a refinement works in. A box is the region; points outside it grow it (with the
 * point margin) so every point can be honoured. Points alone: their bounding box plus the margin.
 * @example refinementRegion({ box: { x: 0, y: 0, width: 0.5, height: 0.5 } }, 100, 100) // { x0: 0, y0: 0, x1: 50, y1: 50 }
 */
export function refinementRegion(
  request: { box?: Box; points?: RefinementPoint[] },
  width: number,
  height: number,
): Rect {
  const margin = pointMargin(width, height)
  const points = (request.points ?? []).map((p) => toPixel(p, width, height))
  let region = request.box ? boxRect(request.box, width, height) : undefined
  const outside = region ? points.filter((p) => !inRect(region as Rect, p.x, p.y)) : points
  if (outside.length) {
    const hull = outside.reduce<Rect>((r, p) => union(r, { x0: p.x, y0: p.y, x1: p.x + 1, y1: p.y + 1 }), {
      x0: outside[0].x,
      y0: outside[0].y,
      x1: outside[0].x + 1,
      y1: outside[0].y + 1,
    })
    const grown = grow(hull, margin, width, height)
    region = region ? union(region, grown) : grown
  }
  if (!region) throw new Error('Expected points or a box')
  return region
}

/**
 * Per pixel of `region` (row-major, region-sized): how much the refinement may replace the base,
 * 1 inside, falling smoothly to 0 at the region's sides that lie inside the image over `taper`
 * pixels, so the new mask meets the untouched base without a seam. Sides on the image's own edge
 * need no taper: nothing lies beyond them.
 */
export function taperWeights(region: Rect, width: number, height: number, taper: number): Float32Array {
  const rw = rectWidth(region)
  const rh = rectHeight(region)
  const ramp = (d: number) => {
    if (taper <= 0 || d >= taper) return 1
    const t = d / taper
    return t * t * (3 - 2 * t)
  }
  // Distance from a pixel's centre to each inner side, in pixels; Infinity for sides on the image edge.
  const axis = (n: number, lowInside: boolean, highInside: boolean) =>
    Float32Array.from({ length: n }, (_, i) =>
      Math.min(
        ramp(lowInside ? i + 0.5 : Number.POSITIVE_INFINITY),
        ramp(highInside ? n - i - 0.5 : Number.POSITIVE_INFINITY),
      ),
    )
  const wx = axis(rw, region.x0 > 0, region.x1 < width)
  const wy = axis(rh, region.y0 > 0, region.y1 < height)
  const out = new Float32Array(rw * rh)
  for (let y = 0; y < rh; y++) for (let x = 0; x < rw; x++) out[y * rw + x] = Math.min(wx[x], wy[y])
  return out
}
