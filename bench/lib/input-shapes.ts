/**
 * Model inputs the benchmark tries beside the shipped ones (inference-server/src/levels/sizes.ts:
 * `square` and `lean`): `aspect`, about `side`² pixels at the photo's own aspect (bench/levels.ts's
 * sweep, issue 14). No level ships it, so it lives here.
 */
import type { InputSize } from '../../inference-server/src/segmentation/index.js'
import { type InputShape, inputFor } from '../../inference-server/src/levels/sizes.js'

export type CandidateShape = InputShape | 'aspect'

const roundTo = (v: number, multiple: number) => Math.max(multiple, Math.round(v / multiple) * multiple)

/**
 * The input for `side`² worth of pixels in `shape`: the shipped shapes as the server makes them;
 * `aspect` with the image's aspect, sides rounded to `multiple` (about the same area).
 * @example candidateInput({ width: 1224, height: 816 }, 704, 'aspect', 64) // { width: 832, height: 576 }
 */
export function candidateInput(
  image: { width: number; height: number },
  side: number,
  shape: CandidateShape,
  multiple: number,
): InputSize {
  if (shape !== 'aspect') return inputFor(image, side, shape, multiple)
  const scale = side / Math.sqrt(image.width * image.height)
  return { width: roundTo(image.width * scale, multiple), height: roundTo(image.height * scale, multiple) }
}
