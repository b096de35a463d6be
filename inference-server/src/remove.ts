/**
 * The removal pipeline: decode → segment → alpha → (compose) → encode, timed per stage for
 * `Server-Timing`. Plain functions with their dependencies first, so tests call them directly.
 */
import { InferenceError, toInferenceError } from './errors.js'
import { applyAlpha } from './imaging/alpha.js'
import { composeCutout } from './imaging/compose.js'
import { decodeImage, type ImageInfo } from './imaging/decode.js'
import { encodeCutoutPng, encodeMaskPng } from './imaging/encode.js'
import { mattingSolve } from './imaging/matting.js'
import { decontaminateEdges, refineMask } from './imaging/refine.js'
import { CONFIDENCE_RULES, confidenceWarnings, levelConfidence } from './levels/confidence.js'
import { HIGH_DEFAULTS, type LevelMask, levelMask } from './levels/index.js'
import type { Notice } from '../../src/contract/frames.js'
import type { InferenceStage } from '../../src/contract/stages.js'
import type { Mask, RgbImage } from './imaging/types.js'
import type { Quality, RemoveOptions } from './options.js'
import type { Segmenter } from './segmentation/index.js'

/** Told each stage as the work enters it, so the caller can report it while the work runs. */
export type OnStage = (stage: InferenceStage) => void

/**
 * What each quality level does after its model mask (levels/index.ts picks the inference
 * resolution: `fast` smaller, `balanced` 1024², `high` 1024² plus a zoomed look at the edges).
 * Every level's cutout gets its edge colours decontaminated (imaging/refine.ts, one blur-fusion
 * pass over the edge band: issue 22 measured it lowers the edge colour error at every level, for
 * a few ms); it changes colours only, never the mask. `fast`'s is estimated at its model input's
 * pixels, not the photo's (issue 44: 12 MP 4.1 s → 0.9 s in process; edge colour error 33.62
 * against 33.37 at 4 MP, 34.67 without; bench/results/levels-fast-colours-issue44.json).
 */
export const QUALITY_PROFILES: Record<Quality, { compressionLevel: number }> = {
  // PNG at zlib level 1: larger files, the fastest encode.
  fast: { compressionLevel: 1 },
  // The reference package's mask, bit for bit.
  balanced: { compressionLevel: 6 },
  // Its edge refinement's one switch is HIGH_DEFAULTS.refine (levels/index.ts): off.
  high: { compressionLevel: 6 },
}

/** Above this many pixels `high` refines edges with the guided filter: the matting solve's time grows with the band. */
export const MATTING_MAX_PIXELS = 1_500_000

/** Below this long side the model mask is already at (or above) source resolution: nothing to refine. */
export const REFINE_MIN_SIDE = 1024

export interface Timings {
  decode: number
  segment: number
  alpha: number
  /** A cutout's edge colours (imaging/refine.ts); absent for a mask. */
  decontaminate?: number
  /** Compose and the PNG. */
  encode: number
}

export interface RemoveResult {
  png: Buffer
  /** Model runs the level took: 1, or for `high` on a large image 1 + its close-up tiles. */
  modelRuns: number
  width: number
  height: number
  timings: Timings
  warnings: Notice[]
  /** How sure the mask is, 0..1 (levels/confidence.ts); `low_confidence` is in `warnings` below the threshold. */
  confidence: number
}

async function timed<T>(timings: Partial<Timings>, stage: keyof Timings, work: () => Promise<T> | T): Promise<T> {
  const start = performance.now()
  try {
    return await work()
  } finally {
    timings[stage] = (timings[stage] ?? 0) + performance.now() - start
  }
}

/**
 * Removes the background of one encoded image.
 * @throws {InferenceError} 400/413/415 for bad images, 500 `processing_failed` for model or encoder failures
 * @example const { png } = await removeBackground(segmenter, bytes, { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' });
 */
export async function removeBackground(
  segmenter: Segmenter,
  bytes: Uint8Array,
  options: RemoveOptions,
  onStage: OnStage = () => {},
  /** The caller's: `high` runs no further close-up once it aborts. */
  signal?: AbortSignal,
): Promise<RemoveResult> {
  const timings: Partial<Timings> = {}
  const { image, original } = await timed(timings, 'decode', () => decodeImage(bytes, { maxPixels: options.maxPixels }))
  try {
    const profile = QUALITY_PROFILES[options.quality]
    onStage('segmenting')
    const {
      mask: raw,
      modelRuns,
      doubts,
      working,
    } = await timed(timings, 'segment', () =>
      levelAlpha(segmenter, image, options.quality, { signal, onRefining: () => onStage('refining') }),
    )
    const mask = await timed(timings, 'alpha', () => applyAlpha(raw, options.alpha))
    onStage('rendering')
    // Decontaminate with the soft (refined) alpha, the best estimate of how much background each
    // edge pixel holds, whatever threshold or feather the output alpha then gets; its window
    // statistics at no more than the pixels the level's mask was decided at (`fast`: its input's,
    // from the photo its finish already scaled there).
    const edges =
      options.output === 'mask'
        ? undefined
        : await timed(timings, 'decontaminate', () =>
            decontaminateEdges(image, raw, working ? { maxWorkPixels: working.pixels, workPhoto: working.photo } : {}),
          )
    // `encode` covers compose and the PNG.
    const png = await timed(timings, 'encode', async () => {
      if (options.output === 'mask') return encodeMaskPng(mask, profile)
      return encodeCutoutPng(composeCutout(image, mask, edges), profile)
    })
    // Of the level's own mask, before the alpha option (a threshold would hide the unsure band).
    const rule = CONFIDENCE_RULES[options.quality]
    const confidence = levelConfidence(raw.data, doubts, rule.measure)
    return {
      png,
      modelRuns,
      width: image.width,
      height: image.height,
      timings: timings as Timings,
      warnings: [...downscaleWarnings(original, image), ...confidenceWarnings(confidence, rule.threshold)],
      confidence,
    }
  } catch (err) {
    throw err instanceof InferenceError
      ? err
      : toInferenceError(err, `Background removal failed with model ${segmenter.version}`)
  }
}

/**
 * A level's soft mask before the alpha option, as a removal makes it: its model mask (levels/,
 * the shipped method only), then `high`'s edge refinement when HIGH_DEFAULTS.refine is on.
 * Refinement is counted in the `segment` timing: it is part of making the mask. The benchmark
 * composes the steps itself to try other methods (bench/lib/high-candidates.ts).
 * @example const { mask } = await levelAlpha(segmenter, image, 'high')
 */
export async function levelAlpha(
  segmenter: Segmenter,
  image: RgbImage,
  quality: Quality,
  { signal, onRefining }: { signal?: AbortSignal; onRefining?: () => void } = {},
): Promise<LevelMask> {
  const level = await levelMask(segmenter, image, quality, signal)
  onRefining?.()
  return { ...level, mask: await refineEdges(image, level.mask, quality === 'high' && HIGH_DEFAULTS.refine) }
}

/** The edge band solved again from the photo's colours when `refine` (HighOptions.refine); else the mask as it is. */
export async function refineEdges(image: RgbImage, mask: Mask, refine: boolean): Promise<Mask> {
  if (!refine) return mask
  if (image.width * image.height <= MATTING_MAX_PIXELS) return mattingSolve(image, mask)
  return Math.max(image.width, image.height) > REFINE_MIN_SIDE ? refineMask(image, mask) : mask
}

/**
 * Validates that the whole image decodes and returns its upright size and type.
 * @example await inspectImage(bytes) // { mimeType: 'image/png', width: 512, height: 512 }
 */
export async function inspectImage(bytes: Uint8Array): Promise<ImageInfo> {
  const { mimeType, width, height } = await decodeImage(bytes)
  return { mimeType, width, height }
}

/** Says so when a pixel budget (an anonymous preview) made the result smaller than the photo. */
function downscaleWarnings(
  original: { width: number; height: number },
  delivered: { width: number; height: number },
): Notice[] {
  if (original.width === delivered.width && original.height === delivered.height) return []
  return [
    {
      code: 'preview_downscaled',
      message: `Preview scaled from ${original.width}×${original.height} to ${delivered.width}×${delivered.height}; sign in or use an API key for full resolution`,
    },
  ]
}
