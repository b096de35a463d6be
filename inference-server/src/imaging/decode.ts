/**
 * Bytes → 8-bit sRGB RGB pixels, upright (EXIF orientation applied), first frame only.
 * The header is read and the size checked before any full decode, so a 100 MP bomb costs a
 * metadata read, not 400 MB of pixels.
 */
import decodeHeic from 'heic-decode'
import sharp, { type Metadata, type Sharp } from 'sharp'
import { InferenceError } from '../errors.js'
import { sniffImageType } from './sniff.js'
import type { ImageMime, RgbImage } from './types.js'
import { MAX_PIXELS, MIN_SIDE } from '../../../src/contract/limits.js'

// 25 MP (SPEC.md §8) is checked from the header; smaller than 32 px gives the model nothing.
export { MAX_PIXELS, MIN_SIDE }

export interface ImageInfo {
  mimeType: ImageMime
  /** After EXIF orientation. */
  width: number
  height: number
}

export interface DecodedImage extends ImageInfo {
  image: RgbImage
  /** The upright size before a pixel budget scaled it down (equal to width/height otherwise). */
  original: { width: number; height: number }
}

/** sharp stops on warnings too: a truncated JPEG is only a libjpeg warning, and must be a 400. */
const SHARP_INPUT = { failOn: 'warning', limitInputPixels: MAX_PIXELS, pages: 1, page: 0 } as const

function corrupt(mimeType: string, err: unknown): InferenceError {
  const detail = err instanceof Error ? err.message : String(err)
  return new InferenceError('invalid_input', `Could not decode ${mimeType} image: ${detail.trim()}`, { cause: err })
}

async function readHeader(bytes: Uint8Array, mimeType: ImageMime): Promise<Metadata> {
  try {
    // No limitInputPixels here: the header read must succeed on huge images so we can say 413.
    return await sharp(bytes, { failOn: 'none' }).metadata()
  } catch (err) {
    throw corrupt(mimeType, err)
  }
}

/**
 * Sniffs and validates the header: 415 when not an accepted format, 413 over 25 MP,
 * 400 when under 32×32 or the header is unreadable.
 * @example await inspectHeader(bytes) // { mimeType: 'image/png', width: 512, height: 512 }
 */
export async function inspectHeader(bytes: Uint8Array): Promise<ImageInfo & { metadata: Metadata }> {
  const mimeType = sniffImageType(bytes)
  if (!mimeType) {
    throw new InferenceError(
      'unsupported_media',
      'Expected JPEG, PNG, WebP, AVIF, HEIC or HEIF image bytes but received an unknown format',
    )
  }
  const metadata = await readHeader(bytes, mimeType)
  const { width = 0, height = 0 } = metadata
  if (width * height > MAX_PIXELS) {
    throw new InferenceError(
      'image_too_large',
      `Expected at most ${MAX_PIXELS} pixels but received ${width}×${height} (${width * height})`,
    )
  }
  if (width < MIN_SIDE || height < MIN_SIDE) {
    throw new InferenceError(
      'invalid_input',
      `Expected an image of at least ${MIN_SIDE}×${MIN_SIDE} pixels but received ${width}×${height}`,
    )
  }
  // EXIF orientations 5-8 are the quarter turns: the upright image swaps its sides.
  const swap = (metadata.orientation ?? 1) >= 5
  return { mimeType, width: swap ? height : width, height: swap ? width : height, metadata }
}

/**
 * HEIC/HEIF with HEVC: sharp's libvips has no HEVC decoder (it reports `compression: 'hevc'` and
 * fails), so libheif's wasm build decodes it. libheif applies the file's own rotation (irot/imir),
 * which is authoritative in HEIF, so no EXIF rotation follows.
 */
async function decodeHevc(bytes: Uint8Array, mimeType: ImageMime): Promise<Sharp> {
  try {
    const { width, height, data } = await decodeHeic({ buffer: bytes })
    return sharp(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), { raw: { width, height, channels: 4 } })
  } catch (err) {
    throw corrupt(mimeType, err)
  }
}

/**
 * Fully decodes an accepted image to upright 8-bit sRGB RGB. A source alpha channel is dropped,
 * as the reference package does: the model sees only colour, and the cutout's alpha is the mask.
 * @example const { image, mimeType } = await decodeImage(bytes);
 */
export async function decodeImage(bytes: Uint8Array, opts: { maxPixels?: number } = {}): Promise<DecodedImage> {
  const info = await inspectHeader(bytes)
  const { metadata, ...header } = info
  const hevc = metadata.format === 'heif' && metadata.compression === 'hevc'
  const pipeline = hevc ? await decodeHevc(bytes, info.mimeType) : sharp(bytes, SHARP_INPUT).rotate()
  // A pixel budget (anonymous previews) shrinks the image before anything else works on it.
  if (opts.maxPixels && info.width * info.height > opts.maxPixels) {
    const scale = Math.sqrt(opts.maxPixels / (info.width * info.height))
    pipeline.resize(Math.max(1, Math.floor(info.width * scale)), Math.max(1, Math.floor(info.height * scale)), {
      fit: 'fill',
    })
  }
  try {
    const { data, info: raw } = await pipeline
      .toColourspace('srgb')
      .removeAlpha()
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true })
    if (raw.channels !== 3) throw new Error(`expected 3 channels after decode, got ${raw.channels}`)
    const image: RgbImage = {
      data: new Uint8Array(data.buffer, data.byteOffset, data.length),
      width: raw.width,
      height: raw.height,
      channels: 3,
    }
    return {
      ...header,
      width: raw.width,
      height: raw.height,
      image,
      original: { width: info.width, height: info.height },
    }
  } catch (err) {
    throw corrupt(info.mimeType, err)
  }
}
