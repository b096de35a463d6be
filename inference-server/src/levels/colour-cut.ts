/**
 * @module
 * `high`'s independent evidence (issue 31): a colour model of what every view is sure of. The
 * pixels all views call foreground (or all call background) with confidence seed OpenCV's GrabCut
 * (Rother, Kolmogorov & Blake 2004: a Gaussian-mixture colour model per side and a graph cut whose
 * pairwise term follows the photo's edges); every other pixel starts as "probably" the side the
 * views' mean puts it on, and the cut decides it from colours and edges alone. Its answer is never
 * used as a mask: arbitrate.ts asks it, per region where the views disagree or the model is faint,
 * which side that region's colours belong to.
 * Runs at most `maxPixels` (GrabCut's graph is large and OpenCV's heap never shrinks); the answer
 * comes back at source size by nearest neighbour (or at `at`, a caller's working size: fast.ts).
 */
import sharp from 'sharp'
import { loadOpenCv, withMats, type CvMat } from '../refinement/opencv.js'
import type { RgbImage } from '../imaging/types.js'
import { SUBJECT, UNSURE_BAND } from './bands.js'

export interface ColourCutOptions {
  /** Working size, pixels. */
  maxPixels: number
  /** A pixel is a sure seed when every view is ≥ `sure` (foreground) or ≤ 255 − `sure` (background). */
  sure: number
  iterations: number
}

/** Sure seeds: outside the unsure band on both sides (UNSURE_BAND.low is 255 − its high). */
export const COLOUR_CUT_DEFAULTS: ColourCutOptions = { maxPixels: 20_000, sure: UNSURE_BAND.high, iterations: 3 }

/** OpenCV's RNG seed before each cut (GrabCut's k-means): the same input gives the same answer. */
const SEED = 0x5eed

/** `data` (w×h, 1 or 3 channels) resized to W×H: bilinear for the photo, nearest for planes. */
async function resize(data: Uint8Array, w: number, h: number, channels: 1 | 3, W: number, H: number) {
  let pipeline = sharp(data, { raw: { width: w, height: h, channels } }).resize(W, H, {
    fit: 'fill',
    kernel: channels === 3 ? 'linear' : 'nearest',
  })
  // A 1-channel raw comes back as 3 channels unless told it is greyscale (STACK.md).
  if (channels === 1) pipeline = pipeline.toColourspace('b-w')
  const out = await pipeline.raw().toBuffer()
  return new Uint8Array(out.buffer, out.byteOffset, out.length)
}

/**
 * GrabCut's starting labels from the views (0 BGD, 1 FGD, 2 PR_BGD, 3 PR_FGD, OpenCV's values):
 * sure where all views are sure alike, else probably the side of the views' mean.
 * @example seedLabels([Uint8Array.of(255, 0, 200)], 230) // [1, 0, 3]
 */
export function seedLabels(views: Uint8Array[], sure: number): Uint8Array {
  const n = views[0].length
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    let lo = 255
    let hi = 0
    let sum = 0
    for (const v of views) {
      const x = v[i]
      if (x < lo) lo = x
      if (x > hi) hi = x
      sum += x
    }
    if (lo >= sure) out[i] = 1
    else if (hi <= 255 - sure) out[i] = 0
    else out[i] = sum >= SUBJECT * views.length ? 3 : 2
  }
  return out
}

/**
 * The colour cut's side per pixel (1 foreground, 0 background) at `image`'s size, or null when the
 * views leave no sure pixel of one side (nothing to learn that side's colours from).
 */
export async function colourCut(
  image: RgbImage,
  views: Uint8Array[],
  options: Partial<ColourCutOptions> = {},
  at: { width: number; height: number } = image,
): Promise<Uint8Array | null> {
  const o = { ...COLOUR_CUT_DEFAULTS, ...options }
  const { width, height } = image
  const scale = Math.min(1, Math.sqrt(o.maxPixels / (width * height)))
  const ww = Math.max(1, Math.round(width * scale))
  const wh = Math.max(1, Math.round(height * scale))
  const small = scale < 1 ? await Promise.all(views.map((v) => resize(v, width, height, 1, ww, wh))) : views
  const labels = seedLabels(small, o.sure)
  if (!labels.includes(1) || !labels.includes(0)) return null
  const rgb = scale < 1 ? await resize(image.data, width, height, 3, ww, wh) : image.data
  const { cv } = await loadOpenCv()
  const cut = withMats((keep) => {
    const img: CvMat = keep(new cv.Mat(wh, ww, cv.CV_8UC3))
    img.data.set(rgb)
    const mask: CvMat = keep(new cv.Mat(wh, ww, cv.CV_8UC1))
    mask.data.set(labels)
    cv.setRNGSeed(SEED)
    const rect = new cv.Rect(0, 0, ww, wh)
    cv.grabCut(img, mask, rect, keep(new cv.Mat()), keep(new cv.Mat()), o.iterations, cv.GC_INIT_WITH_MASK)
    return mask.data.map((v) => (v === cv.GC_FGD || v === cv.GC_PR_FGD ? 255 : 0))
  })
  const same = ww === at.width && wh === at.height
  const full = same ? cut : await resize(cut, ww, wh, 1, at.width, at.height)
  return full.map((v) => (v >= SUBJECT ? 1 : 0))
}
