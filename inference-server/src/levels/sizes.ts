/**
 * @module
 * Model input sizes below the native 1024²: `fast`'s (its size is chosen in fast.ts) and `high`'s
 * small view. `balanced` and `high` run the model at its native 1024². Issue 14's rule for `fast`,
 * IoU ≥ 0.95 against `balanced`, is retired: sizes are judged against real ground truth.
 */
import type { InputSize, ModelInput } from '../segmentation/index.js'

/**
 * How a level shapes its model input: a square, stretched as the model was trained (`high`'s small
 * view), or `lean` (`fast`'s). Other shapes the benchmark tries (the photo's aspect) are
 * bench/lib/input-shapes.ts's.
 */
export type InputShape = 'square' | 'lean'

/**
 * `high`'s small view (views.ts): 640², stretched like the model's own 1024², the input `fast` ran
 * at when `high`'s rule was chosen (issue 31); kept apart from `fast`'s own input (fast.ts) so a
 * change to `fast` leaves `high` as measured.
 */
export const SMALL_VIEW: { side: number; shape: InputShape } = { side: 640, shape: 'square' }

/**
 * The input for `side`² worth of pixels: `side`² itself, or `lean`: `side` along the photo's long
 * side and one `multiple` less along the short one, nearer its aspect than a square.
 * @example inputFor({ width: 1224, height: 816 }, 704, 'lean', 64) // { width: 704, height: 640 }
 */
export function inputFor(
  image: { width: number; height: number },
  side: number,
  shape: InputShape,
  multiple: number,
): InputSize {
  if (shape === 'square') return { width: side, height: side }
  const short = Math.max(multiple, side - multiple)
  return image.width >= image.height ? { width: side, height: short } : { width: short, height: side }
}

/** `high`'s small view of this image on this model: the native input when the model's size is fixed or set per photo. */
export function smallViewInput(image: { width: number; height: number }, model: ModelInput): InputSize {
  if (model.kind !== 'any') return model.native
  return inputFor(image, SMALL_VIEW.side, SMALL_VIEW.shape, model.multiple)
}
