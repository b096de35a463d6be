/**
 * @module
 * `high`'s choice of view (issue 22). Which input the model reads a photo best at depends on the
 * photo: on the real photos of ../shared/gt the 1024² view missed half a thistle's fuzz and an
 * ostrich's feathers that the mirrored view found, and the photo-aspect view kept a flower the
 * square one lost. A plain or confidence-weighted per-pixel mean of the views measured worse than
 * `balanced` (a view that has mistaken the subject is confidently wrong over large areas), but the
 * view that is most decisive over the whole photo (fewest pixels near 0.5) was the better one on
 * every photo where the views disagree (bench/high-tuning-gt.ts; docs/quality.md). So `high` runs
 * the views and keeps the most decisive; `balanced`'s own view wins ties.
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { InputSize, Segmenter } from '../segmentation/index.js'
import { inputFor } from './sizes.js'

/** Another view replaces the reference one only when it is more decisive by more than this. */
export const VIEW_MARGIN = 0.002

/**
 * Mean decisiveness of a mask: 1 when every pixel is 0 or 255, 0 when all are mid-grey.
 * @example confidence(new Uint8Array([0, 255])) // 1
 */
export function confidence(data: Uint8Array): number {
  let sum = 0
  for (let i = 0; i < data.length; i++) sum += Math.abs(data[i] - 127.5)
  return sum / (127.5 * Math.max(1, data.length))
}

/** The image mirrored left to right. */
export function mirrorImage(image: RgbImage): RgbImage {
  const { width, height } = image
  const out = new Uint8Array(image.data.length)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const from = (y * width + width - 1 - x) * 3
      const to = (y * width + x) * 3
      out[to] = image.data[from]
      out[to + 1] = image.data[from + 1]
      out[to + 2] = image.data[from + 2]
    }
  return { ...image, data: out }
}

/** The mask mirrored left to right. */
export function mirrorMask(mask: Mask): Mask {
  const { width, height } = mask
  const out = new Uint8Array(mask.data.length)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) out[y * width + x] = mask.data[y * width + width - 1 - x]
  return { data: out, width, height }
}

/**
 * The most decisive of `base` (the model's native view, balanced's mask) and the other views:
 * the mirrored native view, and on a model that takes any size the native area at the photo's aspect.
 * @returns the chosen mask and the model runs the other views took
 */
export async function decisiveView(
  segmenter: Segmenter,
  image: RgbImage,
  base: Mask,
  signal?: AbortSignal,
): Promise<{ mask: Mask; modelRuns: number }> {
  const native = segmenter.input.native
  const views: Array<() => Promise<Mask>> = [
    async () => mirrorMask(await segmenter.segment(mirrorImage(image), native)),
  ]
  if (segmenter.input.kind === 'any') {
    const { multiple } = segmenter.input
    const aspect: InputSize = inputFor(image, Math.sqrt(native.width * native.height), 'aspect', multiple)
    if (aspect.width !== native.width || aspect.height !== native.height)
      views.push(() => segmenter.segment(image, aspect))
  }
  let best = base
  let bestScore = confidence(base.data) + VIEW_MARGIN
  let runs = 0
  for (const view of views) {
    if (signal?.aborted) break
    const mask = await view()
    runs++
    const score = confidence(mask.data)
    if (score > bestScore) [best, bestScore] = [mask, score]
  }
  return { mask: best, modelRuns: runs }
}
