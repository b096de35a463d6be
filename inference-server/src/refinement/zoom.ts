/**
 * @module
 * The zoomed second look (DESIGN.md §3 "Refinements", step a). The model sees a whole photo at
 * 1024², so a 12 MP photo's detail is lost before it starts; cropped to the region at full
 * resolution, the same 1024² input covers a few times more of the subject's pixels. Two looks:
 * a tight crop (most resolution, fewest distractions) and a wide one (enough surroundings to see
 * what the subject is). Per pixel the new mask is the median of the base, the tight look and the
 * wide look: a tight crop that cuts through the subject can make the model take something else in
 * it for the subject (a box over an astronaut's suit and helmet kept only the helmet); the wide
 * look and the base then outvote it. Measured in bench/refinement.ts (docs/quality.md
 * "Refinements"): the tight look alone lowered SAD more on average but raised it on one box of 18;
 * the median lowered it on all 18. The result replaces the base inside the region, tapered to the
 * base near the region's inner sides so there is no seam.
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { Segmenter } from '../segmentation/index.js'
import { grow, type Rect, rectHeight, rectWidth, taperWeights } from './region.js'

/** Context around the region in each look, as a fraction of the region's longer side (at least 16 px). */
export const TIGHT_CONTEXT = 0.05
export const WIDE_CONTEXT = 0.5
/** The blend's taper at the region's inner sides, as a fraction of its shorter side (2–32 px). */
export const TAPER_FRACTION = 0.03

/**
 * A copy of `rect` of `image`.
 * @example cropRgb(image, { x0: 0, y0: 0, x1: 10, y1: 10 }).width // 10
 */
export function cropRgb(image: RgbImage, rect: Rect): RgbImage {
  const w = rectWidth(rect)
  const h = rectHeight(rect)
  const data = new Uint8Array(w * h * 3)
  for (let y = 0; y < h; y++) {
    const from = ((rect.y0 + y) * image.width + rect.x0) * 3
    data.set(image.data.subarray(from, from + w * 3), y * w * 3)
  }
  return { data, width: w, height: h, channels: 3 }
}

/** The taper width for a region, in pixels. */
export const taperFor = (region: Rect): number =>
  Math.min(32, Math.max(2, Math.round(TAPER_FRACTION * Math.min(rectWidth(region), rectHeight(region)))))

/** One look: the model on `region` plus `context` around it; the mask is the crop's. */
async function look(segmenter: Segmenter, image: RgbImage, region: Rect, context: number) {
  const pad = Math.max(16, Math.round(context * Math.max(rectWidth(region), rectHeight(region))))
  const crop = grow(region, pad, image.width, image.height)
  return { crop, mask: await segmenter.segment(cropRgb(image, crop)) }
}

const median3 = (a: number, b: number, c: number) => Math.max(Math.min(a, b), Math.min(Math.max(a, b), c))

/**
 * Segments the region again at full resolution and blends the result into `mask` (a new mask;
 * pixels outside `region` are copied unchanged).
 * @example const zoomed = await zoomedLook(segmenter, image, base, region);
 */
export async function zoomedLook(segmenter: Segmenter, image: RgbImage, mask: Mask, region: Rect): Promise<Mask> {
  const { width } = image
  const tight = await look(segmenter, image, region, TIGHT_CONTEXT)
  const wide = await look(segmenter, image, region, WIDE_CONTEXT)
  const weights = taperWeights(region, width, image.height, taperFor(region))
  const out = new Uint8Array(mask.data)
  const rw = rectWidth(region)
  const at = (l: { crop: Rect; mask: Mask }, x: number, y: number) =>
    l.mask.data[(y - l.crop.y0) * l.mask.width + (x - l.crop.x0)]
  for (let y = region.y0; y < region.y1; y++) {
    for (let x = region.x0; x < region.x1; x++) {
      const i = y * width + x
      const fresh = median3(out[i], at(tight, x, y), at(wide, x, y))
      out[i] = Math.round(out[i] + weights[(y - region.y0) * rw + (x - region.x0)] * (fresh - out[i]))
    }
  }
  return { data: out, width, height: image.height }
}
