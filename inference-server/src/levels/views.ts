/**
 * @module
 * `high`'s other views of the photo (issues 22, 31). Which input the model reads a photo best at
 * depends on the photo: on ../shared/gt the 1024² view missed half a thistle's fuzz and an
 * ostrich's feathers that the mirrored view found, and the photo-aspect view kept a flower the
 * square one lost. But a view is also confidently wrong as often (issue 31): keeping the "most
 * decisive" whole view made `high` worse than `balanced` on 5 of 45 photos nobody tuned on. So
 * the views only propose; arbitrate.ts decides per region, on evidence other than the model's.
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { InputSize, Segmenter } from '../segmentation/index.js'
import { inputFor } from './sizes.js'

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

/** `high`'s other views: the mirrored photo at the native size, the native area at the photo's aspect, `fast`'s input. */
export type HighView = 'mirror' | 'aspect' | 'small'

/** What one other view costs at the model, in native runs (640² is 0.39 of 1024²'s pixels). */
export const VIEW_COST: Record<HighView, number> = { mirror: 1, aspect: 1, small: 0.4 }

/**
 * The masks of the other `views` of `image`, in the photo's frame and at its size; a view the model
 * cannot take (a fixed-size model has no aspect or small view) is left out.
 * @returns the masks and the model runs they took
 */
export async function otherViews(
  segmenter: Segmenter,
  image: RgbImage,
  views: readonly HighView[],
  small: InputSize,
  signal?: AbortSignal,
): Promise<Uint8Array[]> {
  const native = segmenter.input.native
  const out: Uint8Array[] = []
  for (const view of views) {
    if (signal?.aborted) break
    if (view === 'mirror') out.push(mirrorMask(await segmenter.segment(mirrorImage(image), native)).data)
    else if (segmenter.input.kind === 'any') {
      const size =
        view === 'aspect'
          ? inputFor(image, Math.sqrt(native.width * native.height), 'aspect', segmenter.input.multiple)
          : small
      if (size.width !== native.width || size.height !== native.height)
        out.push((await segmenter.segment(image, size)).data)
    }
  }
  return out
}
