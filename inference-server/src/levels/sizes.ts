/**
 * @module
 * The model input size of each quality level. `balanced` and `high` run the model at its native
 * 1024²; `fast` at a smaller size picked by measurement (bench/levels.ts: the fastest size whose
 * mask IoU against `balanced` is ≥ 0.95 on the fixture photos and the quality composites, and at
 * least 2× faster at the model; docs/quality.md "Quality levels").
 */
import type { InputSize, ModelInput } from '../segmentation/index.js'

/** How `fast` shapes its input: a square (stretched, as the model was trained) or the photo's aspect. */
export type FastShape = 'square' | 'aspect'

/**
 * `fast`'s input, from bench/levels.ts (bench/results/levels-sweep.json): about 704² pixels with the
 * photo's aspect (832×576 at 3:2), 2.05× faster than 1024² at 1 MP, IoU ≥ 0.95 against `balanced`
 * on the astronaut, chelsea, coffee and their composites. No smaller input keeps rocket.jpg's
 * lattice towers as 1024² does (IoU 0.59–0.71 at every candidate): docs/quality.md.
 */
export const FAST_INPUT = { side: 704, shape: 'aspect' as FastShape }

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

/** The input `fast` runs at for this image on this model (the native one when the model is static). */
export function fastInput(image: { width: number; height: number }, model: ModelInput): InputSize {
  if (model.kind === 'static') return model.native
  return inputFor(image, FAST_INPUT.side, FAST_INPUT.shape, model.multiple)
}
