/**
 * @module
 * The model input size of each quality level. `balanced` and `high` run the model at its native
 * 1024²; `fast` at a smaller size picked by measurement against real ground truth (issue 22:
 * bench/high-tuning-gt.ts on ../shared/gt, at least 2× faster than 1024² at the model by
 * bench/levels.ts; docs/quality.md). Issue 14's rule, IoU ≥ 0.95 against `balanced`, is retired.
 */
import type { InputSize, ModelInput } from '../segmentation/index.js'

/** How `fast` shapes its input: a square (stretched, as the model was trained) or the photo's aspect. */
export type FastShape = 'square' | 'aspect'

/**
 * `fast`'s input: 640², stretched like the model's own 1024². On the 14 real photos of
 * ../shared/gt its mean SAD is 1.17× `balanced`'s, against 2.12× for issue 14's 704² at the photo's
 * aspect (which lost the flower and the plush duck) and 1.32× for 512²; 2.5× faster than 1024² at
 * the model at 1 MP (bench/results/levels-sweep.json).
 */
export const FAST_INPUT = { side: 640, shape: 'square' as FastShape }

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
  const scale = side / Math.sqrt(image.width * image.height)
  return { width: roundTo(image.width * scale, multiple), height: roundTo(image.height * scale, multiple) }
}

/**
 * The input `fast` runs at for this image on this model: the native one when the model's size is
 * fixed or set per photo by its profile (MODNet's rule runs at every level).
 */
export function fastInput(image: { width: number; height: number }, model: ModelInput): InputSize {
  if (model.kind !== 'any') return model.native
  return inputFor(image, FAST_INPUT.side, FAST_INPUT.shape, model.multiple)
}
