/**
 * @module
 * Refinement capability (`POST /v1/refine`; DESIGN.md §3 "Refinements", "Box refinement"): a
 * new mask from the source photo, the base revision's mask and a box and/or labelled points.
 * 1. region: the box, or the points' bounding box plus a margin (region.ts);
 * 2. (a) a zoomed second look: the model on the region cropped at full resolution, tight and wide,
 *    the median of those and the base replacing the base inside the region (zoom.ts);
 * 3. (b) points: where the look and the base disagree a point picks the base back; islands under
 *    points are kept or dropped (points.ts); then a GrabCut colour cut seeded by the mask and the
 *    points, taken where a point vouches for it (grabcut.ts); each point's pixel ends on its side.
 * Only pixels inside the region change. bench/refinement.ts measures the steps against known alpha
 * (docs/quality.md "Refinements").
 *
 * Points without a box are clicks (clicks.ts): with the project's earlier points they decide the
 * whole subject at once, geodesically, at a working size; bench/clicks.ts measures them by the
 * interactive-segmentation protocol. A box keeps the zoomed look above, and the earlier points'
 * own pixels stay on their sides.
 */
import type { RefineRequest } from '../../../src/contract/editing.js'
import { InferenceError, toInferenceError } from '../errors.js'
import { decodeImage } from '../imaging/decode.js'
import { encodeMaskPng } from '../imaging/encode.js'
import type { Mask, RgbImage } from '../imaging/types.js'
import type { OnStage } from '../remove.js'
import type { Segmenter } from '../segmentation/index.js'
import { refineByClicks } from './clicks.js'
import { colourCut } from './grabcut.js'
import { decodeMaskPng } from './mask.js'
import { applyIslands, honourPoints, type InnerSides, type PlanePoint, settleDisagreements } from './points.js'
import { softenChangedEdges } from './soften.js'
import { pointMargin, type Rect, rectHeight, rectWidth, refinementRegion, toPixel } from './region.js'
import { cropRgb, zoomedLook } from './zoom.js'

/** Which steps run; all by default. The benchmark turns them off one by one to measure each. */
export interface RefineMethod {
  /** (a) the zoomed second look. */
  zoom: boolean
  /** (b) points keep or drop connected regions: settle where the looks disagree, then islands. */
  regions: boolean
  /** (b) the GrabCut colour cut seeded by the points. */
  cut: boolean
  /** (b) the hard edges the point steps wrote, softened along the photo's edges (soften.ts). */
  soften: boolean
}

export const DEFAULT_METHOD: RefineMethod = { zoom: true, regions: true, cut: true, soften: true }

export interface RefineTimings {
  decode: number
  segment: number
  refine: number
  encode: number
}

export interface RefineResult {
  png: Buffer
  width: number
  height: number
  region: Rect
  timings: RefineTimings
}

/** The region's rows and columns of `mask`, as a plane of its own. */
function cropPlane(mask: Mask, r: Rect): Uint8Array {
  const w = rectWidth(r)
  const out = new Uint8Array(w * rectHeight(r))
  for (let y = r.y0; y < r.y1; y++) {
    out.set(mask.data.subarray(y * mask.width + r.x0, y * mask.width + r.x1), (y - r.y0) * w)
  }
  return out
}

function pastePlane(mask: Mask, r: Rect, plane: Uint8Array): void {
  const w = rectWidth(r)
  for (let y = r.y0; y < r.y1; y++) {
    mask.data.set(plane.subarray((y - r.y0) * w, (y - r.y0 + 1) * w), y * mask.width + r.x0)
  }
}

/**
 * The blur radius of `soften`, in source pixels: 4 model pixels' worth (the photo's long side / 1024
 * × 4). Tuned on bench/refinement.ts at 4 MP: gradient error fell as it grew from ½ to 4 model
 * pixels and little more at 6, where SAD began to rise (docs/quality.md "Refinements").
 */
const softenRadius = (width: number, height: number) => Math.max(1, Math.round((4 * Math.max(width, height)) / 1024))

/**
 * The point steps on the region of `mask` (in place; `base` is the mask before the zoomed look):
 * settle where the looks disagree, islands, colour cut, then each point's own pixel.
 */
async function applyPoints(
  image: RgbImage,
  base: Mask,
  mask: Mask,
  region: Rect,
  points: PlanePoint[],
  method: RefineMethod,
) {
  const { width, height } = mask
  const rw = rectWidth(region)
  const rh = rectHeight(region)
  const sides: InnerSides = {
    left: region.x0 > 0,
    top: region.y0 > 0,
    right: region.x1 < width,
    bottom: region.y1 < height,
  }
  const plane = cropPlane(mask, region)
  const before = new Uint8Array(plane)
  // The model's soft edge at source size is a few model pixels wide: an island's fringe.
  const fringe = Math.max(3, Math.ceil((6 * Math.max(width, height)) / 1024))
  if (method.regions) {
    settleDisagreements(plane, cropPlane(base, region), rw, rh, points, fringe)
    applyIslands(plane, rw, rh, points, sides, { reach: pointMargin(width, height), fringe })
  }
  const crop = cropRgb(image, region)
  if (method.cut) await colourCut(crop, plane, points, sides)
  if (method.soften) await softenChangedEdges(crop, before, plane, softenRadius(width, height))
  honourPoints(plane, rw, rh, points, 1)
  pastePlane(mask, region, plane)
}

/**
 * Refines `base` (the mask of `image`) as `request` asks. Exposed for the benchmark, which brings
 * decoded images; the route uses `refineRevision`.
 */
export async function refineMask(
  segmenter: Segmenter,
  image: RgbImage,
  base: Mask,
  request: RefineRequest,
  { method = DEFAULT_METHOD, onStage = () => {} }: { method?: RefineMethod; onStage?: OnStage } = {},
): Promise<{ mask: Mask; region: Rect; segmentMs: number }> {
  const { width, height } = image
  const earlier = (request.earlierPoints ?? []).map((p) => toPixel(p, width, height))
  if (request.points && !request.box) {
    onStage('refining')
    const clicks = [...earlier, ...request.points.map((p) => toPixel(p, width, height))]
    const mask = await refineByClicks(image, base, clicks)
    return { mask, region: { x0: 0, y0: 0, x1: width, y1: height }, segmentMs: 0 }
  }
  const region = refinementRegion(request, width, height)
  onStage('segmenting')
  const started = performance.now()
  const looked = method.zoom
    ? await zoomedLook(segmenter, image, base, region)
    : { ...base, data: new Uint8Array(base.data) }
  const segmentMs = performance.now() - started
  onStage('refining')
  const points = (request.points ?? []).map((p) => {
    const q = toPixel(p, width, height)
    return { x: q.x - region.x0, y: q.y - region.y0, foreground: q.foreground }
  })
  if (points.length) await applyPoints(image, base, looked, region, points, method)
  honourPoints(looked.data, width, height, earlier, 1)
  return { mask: looked, region, segmentMs }
}

/**
 * `POST /v1/refine`'s work: decode the photo (upright, as the removal decoded it) and the base
 * mask, refine, encode an 8-bit greyscale PNG at the source's size.
 * @throws {InferenceError} 400/413/415 for bad images or a mask of another size, 500 when the model or encoder fails
 */
export async function refineRevision(
  segmenter: Segmenter,
  imageBytes: Uint8Array,
  maskBytes: Uint8Array,
  request: RefineRequest,
  onStage: OnStage = () => {},
): Promise<RefineResult> {
  const t0 = performance.now()
  const { image } = await decodeImage(imageBytes)
  const base = await decodeMaskPng(maskBytes, image.width, image.height)
  const t1 = performance.now()
  try {
    const { mask, region, segmentMs } = await refineMask(segmenter, image, base, request, { onStage })
    const t2 = performance.now()
    const png = await encodeMaskPng(mask, { compressionLevel: 6 })
    const timings = { decode: t1 - t0, segment: segmentMs, refine: t2 - t1 - segmentMs, encode: performance.now() - t2 }
    return { png, width: image.width, height: image.height, region, timings }
  } catch (err) {
    throw err instanceof InferenceError
      ? err
      : toInferenceError(err, `Refinement failed with model ${segmenter.version}`)
  }
}
