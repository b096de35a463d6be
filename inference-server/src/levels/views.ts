/**
 * @module
 * `high`'s other views of the photo (issues 22, 31). Which input the model reads a photo best at
 * depends on the photo: on ../shared/gt the 1024² view missed half a thistle's fuzz and an
 * ostrich's feathers that the mirrored view found, and the photo-aspect view kept a flower the
 * square one lost. But a view is also confidently wrong as often (issue 31): keeping the "most
 * decisive" whole view made `high` worse than `balanced` on 5 of 45 photos nobody tuned on. So
 * the views only propose; arbitrate.ts decides per region, on evidence other than the model's.
 */
import type { RgbImage } from '../imaging/types.js'
import type { InputSize, Segmenter } from '../segmentation/index.js'

/**
 * `high`'s other views: `small`, the photo at a smaller input (sizes.ts SMALL_VIEW), a fraction of a
 * native run. Issue 22's mirrored and photo-aspect views cost a native run each; no longer among
 * bench/quality-gt.ts's candidates, they are gone from here (git history has them).
 */
export type HighView = 'small'

/**
 * The masks of the other `views` of `image`, in the photo's frame and at its size; a view the model
 * cannot take (a fixed-size model has no small view) is left out.
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
  // A model of fixed size has no small view: its small input is its native one.
  const takes = segmenter.input.kind === 'any' && (small.width !== native.width || small.height !== native.height)
  if (!views.includes('small') || !takes || signal?.aborted) return []
  return [(await segmenter.segment(image, small)).data]
}
