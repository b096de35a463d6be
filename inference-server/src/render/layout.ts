/**
 * Where a recipe puts the photo (DESIGN.md §3 Exports), in whole pixels:
 *
 * 1. the region: the subject's box when `crop` (the whole image when not, or when the mask has
 *    no subject), grown by `margin` source pixels (rounded) on every side. It is not clamped to
 *    the photo: beyond it the canvas shows background;
 * 2. the canvas: the region's size, or fitted inside `width`×`height` (contain, centred, the rest
 *    background) when both are given, or scaled to the one given keeping the region's aspect;
 * 3. the photo's part of the region, and the canvas pixels it fills (its edges rounded).
 */
import { MAX_PIXELS } from '../../../src/contract/limits.js'
import type { Recipe } from '../../../src/contract/editing.js'
import { InferenceError } from '../errors.js'
import type { Rect } from './crop.js'

/** A rendered canvas may grow past the photo (margins, an upscale): twice the largest photo at most. */
export const MAX_RENDER_PIXELS = 2 * MAX_PIXELS

export interface Layout {
  /** The rendered image's size. */
  width: number
  height: number
  /** The photo's pixels that are drawn (inside the photo). */
  source: Rect
  /** The canvas pixels they fill (scaled when the canvas is). */
  target: Rect
}

/** The region's rectangle on the canvas: all of it, or fitted inside the asked size. */
function fitRegion(region: Rect, recipe: Recipe): { width: number; height: number; content: Rect } {
  const { width: rw, height: rh } = region
  const { width, height } = recipe
  if (width !== undefined && height !== undefined) {
    const scale = Math.min(width / rw, height / rh)
    const cw = Math.min(width, Math.max(1, Math.round(rw * scale)))
    const ch = Math.min(height, Math.max(1, Math.round(rh * scale)))
    const content = { x: Math.floor((width - cw) / 2), y: Math.floor((height - ch) / 2), width: cw, height: ch }
    return { width, height, content }
  }
  const w = width ?? (height === undefined ? rw : Math.max(1, Math.round((rw * height) / rh)))
  const h = height ?? (width === undefined ? rh : Math.max(1, Math.round((rh * width) / rw)))
  return { width: w, height: h, content: { x: 0, y: 0, width: w, height: h } }
}

/**
 * Lays out a render of a `photo`-sized image; `box` is the subject's box (null: none found).
 * @throws {InferenceError} `image_too_large` when the canvas would exceed `MAX_RENDER_PIXELS`
 * @example planLayout({ width: 512, height: 512 }, box, { version: 1, crop: true, margin: 20 })
 */
export function planLayout(photo: { width: number; height: number }, box: Rect | null, recipe: Recipe): Layout {
  const base = recipe.crop && box ? box : { x: 0, y: 0, ...photo }
  const m = Math.round(recipe.margin ?? 0)
  const region = { x: base.x - m, y: base.y - m, width: base.width + 2 * m, height: base.height + 2 * m }
  const { width, height, content } = fitRegion(region, recipe)
  if (width * height > MAX_RENDER_PIXELS) {
    throw new InferenceError(
      'image_too_large',
      `Expected a rendered image of at most ${MAX_RENDER_PIXELS} pixels but the recipe makes ${width}×${height}`,
    )
  }
  // The photo's part of the region (the region always holds the box, which is inside the photo).
  const sx0 = Math.max(0, region.x)
  const sy0 = Math.max(0, region.y)
  const sx1 = Math.min(photo.width, region.x + region.width)
  const sy1 = Math.min(photo.height, region.y + region.height)
  // Region pixel → canvas pixel, edges rounded; at least one pixel, inside the content.
  const toX = (x: number) => content.x + Math.round(((x - region.x) * content.width) / region.width)
  const toY = (y: number) => content.y + Math.round(((y - region.y) * content.height) / region.height)
  const tx0 = Math.min(toX(sx0), content.x + content.width - 1)
  const ty0 = Math.min(toY(sy0), content.y + content.height - 1)
  const tx1 = Math.max(toX(sx1), tx0 + 1)
  const ty1 = Math.max(toY(sy1), ty0 + 1)
  return {
    width,
    height,
    source: { x: sx0, y: sy0, width: sx1 - sx0, height: sy1 - sy0 },
    target: { x: tx0, y: ty0, width: tx1 - tx0, height: ty1 - ty0 },
  }
}
