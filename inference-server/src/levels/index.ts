/**
 * @module
 * Quality levels (SPEC.md §2: `quality` controls inference resolution; issue 14):
 * - `fast`: one model run at a smaller input (sizes.ts, picked by bench/levels.ts);
 * - `balanced`: one run at the native 1024², the reference package's mask bit for bit;
 * - `high`: balanced's run and other views of the photo (mirrored, photo aspect), the most decisive
 *   kept (views.ts), then the zoomed second look over the edge band on large photos (edge-tiles.ts);
 *   the caller then solves the edge band by closed-form matting (small photos) or the guided
 *   filter (large ones), and decontaminates the colours (remove.ts).
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { Quality } from '../options.js'
import type { Segmenter } from '../segmentation/index.js'
import { type EdgeTileOptions, zoomEdges } from './edge-tiles.js'
import { fastInput } from './sizes.js'
import { decisiveView } from './views.js'

export { EDGE_TILE_DEFAULTS, type EdgeTileOptions } from './edge-tiles.js'
export { FAST_INPUT, fastInput } from './sizes.js'

export interface LevelMask {
  mask: Mask
  /** Model runs it took (1, or 1 + the tiles of `high`'s second look). */
  modelRuns: number
}

/**
 * The model mask of `image` for `quality`, at the image's size.
 * @example const { mask } = await levelMask(segmenter, image, 'fast')
 */
export async function levelMask(
  segmenter: Segmenter,
  image: RgbImage,
  quality: Quality,
  tiles: Partial<EdgeTileOptions> = {},
  signal?: AbortSignal,
): Promise<LevelMask> {
  // The level's own model when levels run different ones (SEGMENTATION_MODEL_<LEVEL>, issue 25).
  const model = segmenter.forLevel?.(quality) ?? segmenter
  if (quality === 'fast') return { mask: await model.segment(image, fastInput(image, model.input)), modelRuns: 1 }
  const base = await model.segment(image, model.input.native)
  if (quality === 'balanced') return { mask: base, modelRuns: 1 }
  const view = await decisiveView(model, image, base, signal)
  const zoomed = await zoomEdges(model, image, view.mask, model.input.native, tiles, signal)
  return { mask: zoomed.mask, modelRuns: 1 + view.modelRuns + zoomed.tiles }
}
