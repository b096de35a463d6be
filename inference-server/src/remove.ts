/**
 * The removal pipeline: decode → segment → alpha → (compose) → encode, timed per stage for
 * `Server-Timing`. Plain functions with their dependencies first, so tests call them directly.
 */
import { InferenceError, toInferenceError } from './errors.js';
import { applyAlpha } from './imaging/alpha.js';
import { composeCutout } from './imaging/compose.js';
import { decodeImage, type ImageInfo } from './imaging/decode.js';
import { encodeCutoutPng, encodeMaskPng } from './imaging/encode.js';
import type { Quality, RemoveOptions } from './options.js';
import type { Segmenter } from './segmentation/index.js';

/**
 * What each quality level does. The model's input is static 1024×1024 (STACK.md), so no level
 * changes the inference resolution; see README.md "Quality levels" for the honest account.
 */
export const QUALITY_PROFILES: Record<Quality, { compressionLevel: number }> = {
  // Same mask; PNG at zlib level 1: about 2× faster to encode, larger files.
  fast: { compressionLevel: 1 },
  balanced: { compressionLevel: 6 },
  // Same as balanced for now; the planned edge refinement is described in README.md.
  high: { compressionLevel: 6 },
};

export interface Timings {
  decode: number;
  segment: number;
  alpha: number;
  encode: number;
}

export interface RemoveResult {
  png: Buffer;
  width: number;
  height: number;
  timings: Timings;
}

async function timed<T>(timings: Partial<Timings>, stage: keyof Timings, work: () => Promise<T> | T): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    timings[stage] = performance.now() - start;
  }
}

/**
 * Removes the background of one encoded image.
 * @throws {InferenceError} 400/413/415 for bad images, 500 `processing_failed` for model or encoder failures
 * @example const { png } = await removeBackground(segmenter, bytes, { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' });
 */
export async function removeBackground(segmenter: Segmenter, bytes: Uint8Array, options: RemoveOptions): Promise<RemoveResult> {
  const timings: Partial<Timings> = {};
  const { image } = await timed(timings, 'decode', () => decodeImage(bytes));
  try {
    const raw = await timed(timings, 'segment', () => segmenter.segment(image));
    const mask = await timed(timings, 'alpha', () => applyAlpha(raw, options.alpha));
    const png = await timed(timings, 'encode', () => {
      const profile = QUALITY_PROFILES[options.quality];
      return options.output === 'mask' ? encodeMaskPng(mask, profile) : encodeCutoutPng(composeCutout(image, mask), profile);
    });
    return { png, width: image.width, height: image.height, timings: timings as Timings };
  } catch (err) {
    throw err instanceof InferenceError ? err : toInferenceError(err, `Background removal failed with model ${segmenter.version}`);
  }
}

/**
 * Validates that the whole image decodes and returns its upright size and type.
 * @example await inspectImage(bytes) // { mimeType: 'image/png', width: 512, height: 512 }
 */
export async function inspectImage(bytes: Uint8Array): Promise<ImageInfo> {
  const { mimeType, width, height } = await decodeImage(bytes);
  return { mimeType, width, height };
}
