/**
 * @module
 * The point steps (islands, the colour cut) decide whole regions and write hard 0/255 edges, the
 * cut's at its ≤ 0.25 MP working size, so where they changed the mask its edge is staircased and
 * sharper than any photo's (docs/quality.md "Refinements": gradient error rose on 9 of 12
 * composites). Here those edges are made soft again and laid on the photo's own: a box blur of
 * about one model pixel makes the new edge uncertain, and the colour guided filter that `high`
 * uses settles it along the image's edges. Pixels away from what the points changed keep their value.
 */
import { boxMean, refineMask } from '../imaging/refine.js'
import type { RgbImage } from '../imaging/types.js'
import { dilate } from './points.js'

/**
 * Softens, in place, the edges of `plane` (the region's mask, the size of `image`) that differ
 * from `before`. `radius` is in source pixels (about one model pixel: the photo's long side / 1024).
 */
export async function softenChangedEdges(
  image: RgbImage,
  before: Uint8Array,
  plane: Uint8Array,
  radius: number,
): Promise<void> {
  const { width, height } = image
  const changed = new Uint8Array(plane.length)
  let any = false
  for (let i = 0; i < plane.length; i++) {
    if (plane[i] !== before[i]) {
      changed[i] = 1
      any = true
    }
  }
  if (!any) return
  // The blur reaches `radius` either side of an edge; the guided filter reads twice that.
  const near = dilate(changed, width, height, 2 * radius)
  const blurred = boxMean(Float32Array.from(plane), width, height, radius)
  const soft = new Uint8Array(plane)
  for (let i = 0; i < plane.length; i++) if (near[i]) soft[i] = Math.round(blurred[i])
  const refined = await refineMask(image, { data: soft, width, height }, { radius: 2 * radius })
  for (let i = 0; i < plane.length; i++) if (near[i]) plane[i] = refined.data[i]
}
