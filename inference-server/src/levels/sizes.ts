/**
 * @module
 * Model input sizes below the native 1024²: `fast`'s (its size is chosen in fast.ts) and `high`'s
 * small view. `balanced` and `high` run the model at its native 1024². Issue 14's rule for `fast`,
 * IoU ≥ 0.95 against `balanced`, is retired: sizes are judged against real ground truth.
 */
import type { InputSize, ModelInput } from '../segmentation/index.js'

/** How `fast` shapes its input: a square (stretched, as the model was trained) or the photo's aspect. */
export type FastShape = 'square' | 'aspect' | 'lean'

/**
 * `high`'s small view (views.ts): 640², stretched like the model's own 1024², the input `fast` ran
 * at when `high`'s rule was chosen (issue 31); kept apart from `fast`'s own input (fast.ts) so a
 * change to `fast` leaves `high` as measured.
 */
export const SMALL_VIEW = { side: 640, shape: 'square' as FastShape }

const roundTo = (v: number, multiple: number) => Math.max(multiple, Math.round(v / multiple) * multiple)

/**
 * The input for `side`² worth of pixels: `side`² itself, or with the image's aspect (sides rounded
 * to `multiple`, about the same area).
 * @example inputFor({ width: 1224, height: 816 }, 640, 'aspect', 64) // { width: 768, height: 512 }
 */
export function inputFor(
  image: { width: number; height: number },
  side: number,
  shape: FastShape,
  multiple: number,
): InputSize {
  if (shape === 'square') return { width: side, height: side }
  if (shape === 'lean') {
    // `side` along the photo's long side, one step less along the short one: nearer its aspect than a square.
    const short = Math.max(multiple, side - multiple)
    return image.width >= image.height ? { width: side, height: short } : { width: short, height: side }
  }
  const scale = side / Math.sqrt(image.width * image.height)
  return { width: roundTo(image.width * scale, multiple), height: roundTo(image.height * scale, multiple) }
}

/** `high`'s small view of this image on this model: the native input when the model's size is fixed or set per photo. */
export function smallViewInput(image: { width: number; height: number }, model: ModelInput): InputSize {
  if (model.kind !== 'any') return model.native
  return inputFor(image, SMALL_VIEW.side, SMALL_VIEW.shape, model.multiple)
}
