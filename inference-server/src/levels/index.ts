/**
 * @module
 * Quality levels (SPEC.md §2: `quality` controls inference resolution; issues 14, 22, 31):
 * - `fast`: one model run at a smaller input, then a finish without the model (fast.ts);
 * - `balanced`: one run at the native 1024², the reference package's mask bit for bit;
 * - `high`: balanced's run and other views of the photo (views.ts); `balanced`'s mask is kept
 *   except in the regions where the evidence (a colour model of what all views are sure of:
 *   colour-cut.ts) says the other views are right (arbitrate.ts); then where
 *   `balanced` is half sure over a region a colour model of its own sure pixels calls foreground,
 *   that region is raised (ownFaintPass: fast.ts's faint pass, session 12); then the zoomed
 *   second look over the edge band on large photos (edge-tiles.ts); the caller then decontaminates
 *   the colours (remove.ts). Solving the edge band again from the photo's colours (remove.ts
 *   refineEdges) is `high`'s one switch, HighOptions.refine, and ships off.
 * The shipped methods are FAST_DEFAULTS and HIGH_DEFAULTS; the variants the benchmark explores
 * (bench/lib/fast-candidates.ts, high-candidates.ts) never reach a removal (levels.test.ts pins it).
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { Quality } from '../options.js'
import type { Segmenter } from '../segmentation/index.js'
import { ARBITRATION_DEFAULTS, type ArbitrationOptions, type ArbitrationReport, arbitrate } from './arbitrate.js'
import { COLOUR_CUT_DEFAULTS, type ColourCutOptions, colourCut } from './colour-cut.js'
import { UNSURE_BAND } from './bands.js'
import { zoomEdges } from './edge-tiles.js'
import {
  FAST_DEFAULTS,
  type FastOptions,
  type FastWorking,
  type FinishBasis,
  fastLevel,
  finishBasis,
  finishFast,
} from './fast.js'
import type { Doubts } from './confidence.js'
import { smallViewInput } from './sizes.js'
import { type HighView, otherViews } from './views.js'

export { EDGE_TILE_DEFAULTS, type EdgeTileOptions } from './edge-tiles.js'
export { FAST_DEFAULTS, type FastOptions, fastInputFor } from './fast.js'

/** `high`'s method: which other views, how disputes are settled, whether the edge band is solved again. */
export interface HighOptions {
  views: HighView[]
  arbitration: ArbitrationOptions
  cut: ColourCutOptions
  /**
   * Solve the edge band again from the photo's colours (remove.ts refineEdges: closed-form matting
   * up to MATTING_MAX_PIXELS, the colour guided filter above): the one switch of `high`'s edge
   * refinement. Off since issue 31 (not re-measured on the 48 real pairs; docs/quality.md).
   */
  refine: boolean
  /**
   * `balanced`'s own faint pass (null: off): where `balanced` is faint (between `low` and `high`)
   * over a region that a colour model of `balanced`'s own sure pixels puts at least `share` on the
   * foreground side, the cut's foreground is raised to opaque (fast.ts's faint pass, decided at
   * the model input's pixels). The other views cannot do this where they are fainter still (a
   * plush giraffe's body: 0.4 at 1024², 0.3 at 640²). `edge`: the raised region's border drawn
   * from the photo rather than the cut's grid (raise-edge.ts).
   */
  faint: FastOptions['faint']
}

/** Chosen by bench/quality-gt.ts on ../shared/gt, cross-validated (docs/quality.md). */
export const HIGH_DEFAULTS: HighOptions = {
  views: ['small'],
  arbitration: ARBITRATION_DEFAULTS,
  cut: COLOUR_CUT_DEFAULTS,
  refine: false,
  // The unsure band, raised where the colour cut says; its border by the matting solve over one
  // grid step of the colour cut (raise-edge.ts).
  faint: { ...UNSURE_BAND, share: 0.8, edge: { method: 'matte', steps: 1 } },
}

export interface LevelMask {
  mask: Mask
  /** Model runs it took (1, or 1 + the other views and the tiles of `high`'s second look). */
  modelRuns: number
  /** `high`'s: what the arbitration did (for the confidence and the benchmark). */
  arbitration?: ArbitrationReport
  /** What the level's own steps doubted, for the confidence (confidence.ts). */
  doubts: Doubts
  /**
   * `fast`'s: where its mask was decided, the model input's pixels (and the photo at the finish's
   * working size). The cutout's edge colours are estimated at no more (remove.ts): the mask holds
   * nothing finer, and that step's cost then does not grow with the photo.
   */
  working?: FastWorking
}

/**
 * The model mask of `image` for `quality`, at the image's size.
 * @example const { mask } = await levelMask(segmenter, image, 'fast')
 */
export async function levelMask(
  segmenter: Segmenter,
  image: RgbImage,
  quality: Quality,
  signal?: AbortSignal,
  /** Tests only: removals run HIGH_DEFAULTS (remove.ts levelAlpha passes none). */
  high: HighOptions = HIGH_DEFAULTS,
): Promise<LevelMask> {
  // The level's own model when levels run different ones (SEGMENTATION_MODEL_<LEVEL>, issue 25).
  const model = segmenter.forLevel?.(quality) ?? segmenter
  if (quality === 'fast') {
    const { mask, finished, working } = await fastLevel(model, image)
    return { mask, modelRuns: 1, doubts: { finished }, working }
  }
  const base = await model.segment(image, model.input.native)
  if (quality === 'balanced') return { mask: base, modelRuns: 1, doubts: {} }
  const views = await otherViews(model, image, high.views, smallViewInput(image, model.input), signal)
  // The colour cut is the arbitration's evidence (arbitrate.ts): needed whenever there is another view.
  const cut = views.length ? await colourCut(image, [base.data, ...views], high.cut) : null
  const settled = arbitrate(base, views, cut, high.arbitration)
  const raised = await ownFaintPass(image, base, settled.mask, high.faint, model.input.native)
  const zoomed = await zoomEdges(model, image, raised, model.input.native, {}, signal)
  const { disputed, departed } = settled.report
  return {
    mask: zoomed.mask,
    modelRuns: 1 + views.length + zoomed.tiles,
    arbitration: settled.report,
    doubts: { disputed, departed },
  }
}

/**
 * `high`'s own faint pass (HighOptions.faint) over `mask`, from `base`'s own evidence (its sure
 * pixels' colours; the other views have no say), decided at the native input's pixels.
 */
export async function ownFaintPass(
  image: RgbImage,
  base: Mask,
  mask: Mask,
  faint: HighOptions['faint'],
  native: { width: number; height: number },
  basis?: FinishBasis,
): Promise<Mask> {
  if (!faint) return mask
  const pixels = native.width * native.height
  const b = basis ?? (await finishBasis(image, base, pixels))
  return finishFast(image, mask, { ...FAST_DEFAULTS, faint, stretch: null }, pixels, b)
}
