/**
 * @module
 * The colour-model cut (DESIGN.md §3 "Refinements", step b, its second half): GrabCut (Rother,
 * Kolmogorov & Blake 2004, OpenCV's implementation) inside the region, seeded by the mask and the
 * user's points. Every pixel starts as "probably" its mask side; the points (small discs) and the
 * region's inner sides (where it must meet the untouched mask) are fixed. GrabCut then fits a
 * colour model to each side and cuts the graph again. Its answer is trusted only where a point
 * vouches for it: a changed area is taken when it reaches a point of the side it changed to, so
 * the colour model fixes what the user pointed at and cannot repaint the rest of the region,
 * where the segmentation model (trained on far more than two colour mixtures) knows better.
 * Runs at most `MAX_CUT_PIXELS` (GrabCut's graph is large, and OpenCV's heap never shrinks); the
 * changes are brought back to source size bilinearly.
 */
import sharp from 'sharp'
import type { RgbImage } from '../imaging/types.js'
import { label } from './components.js'
import { type CvMat, loadOpenCv, type OpenCv, withMats } from './opencv.js'
import type { InnerSides, PlanePoint } from './points.js'

/** Working size of the cut; measured in bench/refinement.ts (docs/quality.md "Refinements"). */
export const MAX_CUT_PIXELS = 250_000
export const CUT_ITERATIONS = 4
/** Seed of OpenCV's RNG before each cut (GrabCut's k-means): the same input gives the same mask. */
const SEED = 0x5eed
/** A point's seed disc, as a fraction of the working region's longer side (at least 2 px). */
const SEED_FRACTION = 0.01

async function resizeRaw(data: Uint8Array, w: number, h: number, channels: 1 | 3, W: number, H: number) {
  let pipeline = sharp(data, { raw: { width: w, height: h, channels } }).resize(W, H, { fit: 'fill', kernel: 'linear' })
  // A 1-channel raw comes back as 3 channels unless told it is greyscale (STACK.md).
  if (channels === 1) pipeline = pipeline.toColourspace('b-w')
  const { data: out, info } = await pipeline.raw().toBuffer({ resolveWithObject: true })
  if (info.channels !== channels) throw new Error(`resize gave ${info.channels} channels, expected ${channels}`)
  return new Uint8Array(out.buffer, out.byteOffset, out.length)
}

/** The trimap GrabCut starts from: probable sides from the mask, fixed ring and point discs. */
function seedTrimap(
  cv: OpenCv,
  small: Uint8Array,
  ww: number,
  wh: number,
  points: PlanePoint[],
  sides: InnerSides,
  disc: number,
): Uint8Array {
  const trimap = small.map((v) => (v >= 128 ? cv.GC_PR_FGD : cv.GC_PR_BGD))
  const fix = (i: number) => {
    trimap[i] = small[i] >= 128 ? cv.GC_FGD : cv.GC_BGD
  }
  for (let x = 0; x < ww; x++) {
    if (sides.top) fix(x)
    if (sides.bottom) fix((wh - 1) * ww + x)
  }
  for (let y = 0; y < wh; y++) {
    if (sides.left) fix(y * ww)
    if (sides.right) fix(y * ww + ww - 1)
  }
  for (const p of points) {
    for (let y = Math.max(0, p.y - disc); y <= Math.min(wh - 1, p.y + disc); y++) {
      for (let x = Math.max(0, p.x - disc); x <= Math.min(ww - 1, p.x + disc); x++) {
        if ((x - p.x) ** 2 + (y - p.y) ** 2 <= disc * disc) trimap[y * ww + x] = p.foreground ? cv.GC_FGD : cv.GC_BGD
      }
    }
  }
  return trimap
}

/** GrabCut on 8-bit RGB and a trimap (both ww×wh); returns 1 where it says foreground. */
function grabCut(cv: OpenCv, rgb: Uint8Array, trimap: Uint8Array, ww: number, wh: number): Uint8Array {
  return withMats((keep) => {
    const img: CvMat = keep(new cv.Mat(wh, ww, cv.CV_8UC3))
    img.data.set(rgb)
    const mask: CvMat = keep(new cv.Mat(wh, ww, cv.CV_8UC1))
    mask.data.set(trimap)
    cv.setRNGSeed(SEED)
    cv.grabCut(
      img,
      mask,
      new cv.Rect(0, 0, ww, wh),
      keep(new cv.Mat()),
      keep(new cv.Mat()),
      CUT_ITERATIONS,
      cv.GC_INIT_WITH_MASK,
    )
    return mask.data.map((v) => (v === cv.GC_FGD || v === cv.GC_PR_FGD ? 1 : 0))
  })
}

/**
 * Applies the vouched-for part of a colour cut to `plane` (the region's mask, `image`'s size), in place.
 * `points` are in plane coordinates. Does nothing when the seeds leave a side without pixels.
 */
export async function colourCut(
  image: RgbImage,
  plane: Uint8Array,
  points: PlanePoint[],
  sides: InnerSides,
): Promise<void> {
  const { width: rw, height: rh } = image
  const scale = Math.min(1, Math.sqrt(MAX_CUT_PIXELS / (rw * rh)))
  const ww = Math.max(1, Math.round(rw * scale))
  const wh = Math.max(1, Math.round(rh * scale))
  const rgb = scale < 1 ? await resizeRaw(image.data, rw, rh, 3, ww, wh) : image.data
  const small = scale < 1 ? await resizeRaw(plane, rw, rh, 1, ww, wh) : new Uint8Array(plane)
  const at = (p: PlanePoint) => ({
    x: Math.min(ww - 1, Math.floor((p.x + 0.5) * (ww / rw))),
    y: Math.min(wh - 1, Math.floor((p.y + 0.5) * (wh / rh))),
    foreground: p.foreground,
  })
  const seeds = points.map(at)
  const disc = Math.max(2, Math.round(SEED_FRACTION * Math.max(ww, wh)))
  const { cv } = await loadOpenCv()
  const trimap = seedTrimap(cv, small, ww, wh, seeds, sides, disc)
  if (!trimap.some((v) => v % 2 === 1) || !trimap.some((v) => v % 2 === 0)) return // GC_*FGD are odd
  const cut = grabCut(cv, rgb, trimap, ww, wh)

  // The changed areas, and which of them a point of the new side reaches.
  const changed = cut.map((v, i) => (v !== (small[i] >= 128 ? 1 : 0) ? 1 : 0))
  const parts = label(changed, ww, wh)
  const vouched = new Uint8Array(parts.count + 1)
  for (const p of seeds) {
    for (let y = Math.max(0, p.y - disc); y <= Math.min(wh - 1, p.y + disc); y++) {
      for (let x = Math.max(0, p.x - disc); x <= Math.min(ww - 1, p.x + disc); x++) {
        const i = y * ww + x
        if (parts.labels[i] && cut[i] === (p.foreground ? 1 : 0)) vouched[parts.labels[i]] = 1
      }
    }
  }
  if (!vouched.some((v) => v)) return
  const take = new Uint8Array(ww * wh)
  const value = new Uint8Array(ww * wh)
  for (let i = 0; i < take.length; i++) {
    take[i] = vouched[parts.labels[i]] ? 255 : 0
    value[i] = cut[i] * 255
  }
  // Bilinear back to the region's size: a soft hand-over at the changed areas' borders.
  const weight = scale < 1 ? await resizeRaw(take, ww, wh, 1, rw, rh) : take
  const target = scale < 1 ? await resizeRaw(value, ww, wh, 1, rw, rh) : value
  for (let i = 0; i < plane.length; i++) {
    if (weight[i]) plane[i] = Math.round(plane[i] + (weight[i] / 255) * (target[i] - plane[i]))
  }
}
