/**
 * Where a recipe puts the photo (DESIGN.md §3 Exports), in whole pixels; steps 1 and 2 are the
 * shared contract's (`recipeRegion`, `fitRegion` in src/contract/editing.ts):
 *
 * 1. the region: the subject's box when `crop` (the whole image when not, or when the mask has
 *    no subject), grown by `margin` source pixels (rounded) on every side. It is not clamped to
 *    the photo: beyond it the canvas shows background;
 * 2. the canvas: the region's size, or fitted inside `width`×`height` (contain, centred, the rest
 *    background) when both are given, or scaled to the one given keeping the region's aspect;
 * 3. the photo's part of the region, and the canvas pixels it fills (its edges rounded).
 */
import {
  fitRegion,
  MAX_RENDER_PIXELS,
  type Recipe,
  recipeRegion,
  renderSizeProblem,
} from '../../../src/contract/editing.js'
import { InferenceError } from '../errors.js'
import type { Rect } from './crop.js'

// The size arithmetic is the shared contract's, so the edge's check at request time
// (`smallestCanvas`) and this render cannot disagree.
export { MAX_RENDER_PIXELS }

export interface Layout {
  /** The rendered image's size. */
  width: number
  height: number
  /** The photo's pixels that are drawn (inside the photo). */
  source: Rect
  /** The canvas pixels they fill (scaled when the canvas is). */
  target: Rect
}

/**
 * Lays out a render of a `photo`-sized image; `box` is the subject's box (null: none found).
 * @throws {InferenceError} `image_too_large` when the canvas would exceed `MAX_RENDER_PIXELS`
 * @example planLayout({ width: 512, height: 512 }, box, { version: 1, crop: true, margin: 20 })
 */
export function planLayout(photo: { width: number; height: number }, box: Rect | null, recipe: Recipe): Layout {
  const region = recipeRegion(photo, box, recipe)
  const { width, height, content } = fitRegion(region, recipe)
  const problem = renderSizeProblem({ width, height })
  if (problem) throw new InferenceError('image_too_large', problem)
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
