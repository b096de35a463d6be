/**
 * @module
 * Image type and dimensions from the first bytes of a file, without decoding it (DESIGN.md §1:
 * the edge sniffs headers, the inference server decodes). Callers pass up to the first
 * {@link SNIFF_BYTES}; a header cut short still gives the type, just without dimensions.
 */

import { MAX_IMAGE_BYTES, MAX_PIXELS, MIN_SIDE } from '../contract/limits'

/** SPEC.md §8 limits, shared with the inference server. */
export { MAX_IMAGE_BYTES, MAX_PIXELS, MIN_SIDE }
/** How much of a file callers should hand to {@link sniffImage}: room for a large HEIF `meta`. */
export const SNIFF_BYTES = 256 * 1024

export type ImageMimeType = 'image/jpeg' | 'image/png' | 'image/webp' | 'image/avif' | 'image/heic' | 'image/heif'

export interface SniffedImage {
  mimeType: ImageMimeType
  width?: number
  height?: number
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const JPEG_SIGNATURE = [0xff, 0xd8, 0xff]
/** ISO-BMFF brands (ftyp major or compatible), in the order a file is classified by them. */
const BMFF_BRANDS: readonly [ImageMimeType, readonly string[]][] = [
  ['image/avif', ['avif', 'avis']],
  ['image/heic', ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis']],
  ['image/heif', ['mif1', 'msf1']],
]
/** JPEG start-of-frame markers: C0-CF except DHT (C4), JPG (C8) and DAC (CC). */
const JPEG_SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf])
/** Markers with no length field: TEM, RST0-7, SOI. */
const JPEG_STANDALONE = new Set([0x01, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8])
const JPEG_SOS = 0xda
const JPEG_EOI = 0xd9
const VP8_START_CODE = [0x9d, 0x01, 0x2a]
const VP8L_SIGNATURE = 0x2f
/** The meta box path (ISO/IEC 23008-12) that holds the item properties, `ispe` among them. */
const HEIF_PROPERTY_PATH = ['meta', 'iprp', 'ipco']

const u16be = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1]
const u16le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8)
const u24le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16)
const u32be = (b: Uint8Array, i: number) => ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n))
const startsWith = (b: Uint8Array, sig: number[], at = 0) =>
  b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x)

/** Only report dimensions that are both present and non-zero. */
function withSize(mimeType: ImageMimeType, width?: number, height?: number): SniffedImage {
  return width && height ? { mimeType, width, height } : { mimeType }
}

/** PNG: the first chunk must be IHDR (width, height as big-endian u32). */
function sniffPng(b: Uint8Array): SniffedImage {
  if (b.length < 24 || ascii(b, 12, 4) !== 'IHDR') return { mimeType: 'image/png' }
  return withSize('image/png', u32be(b, 16), u32be(b, 20))
}

/** JPEG: walk the marker segments (APPn, DQT, DHT…) until a start-of-frame. */
function sniffJpeg(b: Uint8Array): SniffedImage {
  let i = 2
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) break // not a marker: corrupt or we lost sync
    const marker = b[i + 1]
    if (marker === 0xff) {
      i++ // fill byte before a marker
      continue
    }
    if (JPEG_STANDALONE.has(marker)) {
      i += 2
      continue
    }
    if (marker === JPEG_SOS || marker === JPEG_EOI) break // frame header always comes before scans
    const length = u16be(b, i + 2)
    if (JPEG_SOF.has(marker)) {
      if (i + 9 > b.length) break
      // Segment: length(2) precision(1) height(2) width(2). Height 0 means "set by DNL later".
      return withSize('image/jpeg', u16be(b, i + 7), u16be(b, i + 5))
    }
    if (length < 2) break
    i += 2 + length
  }
  return { mimeType: 'image/jpeg' }
}

/** WebP: the first chunk after `WEBP` is VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function sniffWebp(b: Uint8Array): SniffedImage {
  const chunk = ascii(b, 12, 4)
  if (chunk === 'VP8 ' && b.length >= 30 && startsWith(b, VP8_START_CODE, 23)) {
    return withSize('image/webp', u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff)
  }
  if (chunk === 'VP8L' && b.length >= 25 && b[20] === VP8L_SIGNATURE) {
    // 14 bits width-1, then 14 bits height-1, little-endian bit order.
    const bits = (b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24)) >>> 0
    return withSize('image/webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1)
  }
  if (chunk === 'VP8X' && b.length >= 30) {
    return withSize('image/webp', u24le(b, 24) + 1, u24le(b, 27) + 1)
  }
  return { mimeType: 'image/webp' }
}

type Box = { type: string; start: number; body: number; end: number }

/** The boxes in `[from, to)`; a box that runs past the buffer is cut at its end. */
function* boxes(b: Uint8Array, from: number, to: number): Generator<Box> {
  let i = from
  while (i + 8 <= to) {
    let size = u32be(b, i)
    let body = i + 8
    if (size === 1) {
      if (i + 16 > to) return
      // 64-bit largesize; anything past 2^53 is beyond any buffer we are given anyway.
      size = u32be(b, i + 8) * 2 ** 32 + u32be(b, i + 12)
      body = i + 16
    } else if (size === 0) {
      size = to - i // "extends to the end of the file"
    }
    if (size < body - i) return
    yield { type: ascii(b, i + 4, 4), start: i, body, end: Math.min(i + size, to) }
    i += size
  }
}

/** AVIF/HEIC/HEIF: the largest `ispe` (image spatial extents) among the item properties. */
function heifSize(b: Uint8Array): { width?: number; height?: number } {
  let scope = { body: 0, end: b.length }
  for (const type of HEIF_PROPERTY_PATH) {
    let found: Box | undefined
    for (const box of boxes(b, scope.body, scope.end)) {
      if (box.type === type) {
        found = box
        break
      }
    }
    if (!found) return {}
    // `meta` is a FullBox: version and flags come before its children.
    scope = { body: found.body + (type === 'meta' ? 4 : 0), end: found.end }
  }
  let best: { width?: number; height?: number } = {}
  for (const box of boxes(b, scope.body, scope.end)) {
    if (box.type !== 'ispe' || box.body + 12 > box.end) continue
    const width = u32be(b, box.body + 4)
    const height = u32be(b, box.body + 8)
    // Thumbnails and grid tiles have their own ispe; the primary image is the largest.
    if (width * height > (best.width ?? 0) * (best.height ?? 0)) best = { width, height }
  }
  return best
}

function sniffBmff(b: Uint8Array): SniffedImage | null {
  const ftypSize = u32be(b, 0)
  const end = Math.min(ftypSize, b.length)
  const brands = [ascii(b, 8, 4)]
  for (let i = 16; i + 4 <= end; i += 4) brands.push(ascii(b, i, 4))
  // A codec major brand (avif, heic…) decides; the generic mif1/msf1 defers to the compatible
  // brands, where a codec brand outranks the generic one.
  const byMajor = BMFF_BRANDS.find(([t, names]) => t !== 'image/heif' && names.includes(brands[0]))
  const match = byMajor ?? BMFF_BRANDS.find(([, names]) => brands.some((x) => names.includes(x)))
  if (!match) return null
  const { width, height } = heifSize(b)
  return withSize(match[0], width, height)
}

/**
 * Identifies a JPEG, PNG, WebP, AVIF, HEIC or HEIF image by its signature and reads its
 * dimensions from the header where that is cheap. `null` for anything else.
 * @param bytes the start of the file; up to {@link SNIFF_BYTES} is plenty
 * @example sniffImage(firstBytes) // { mimeType: 'image/png', width: 512, height: 512 }
 */
export function sniffImage(bytes: Uint8Array): SniffedImage | null {
  if (startsWith(bytes, JPEG_SIGNATURE)) return sniffJpeg(bytes)
  if (startsWith(bytes, PNG_SIGNATURE)) return sniffPng(bytes)
  if (bytes.length >= 16 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') {
    return sniffWebp(bytes)
  }
  if (bytes.length >= 12 && ascii(bytes, 4, 4) === 'ftyp') return sniffBmff(bytes)
  return null
}

/** A refusal of an image: the SPEC.md §7 code to answer with, and the problem's `detail`. */
export interface ImageRefusal {
  code: 'invalid_input' | 'image_too_large' | 'unsupported_media'
  message: string
}

/**
 * Checks an image's size in bytes against SPEC.md §8; `null` when it is acceptable.
 * @example checkImageBytes(60_000_000) // { code: 'image_too_large', message: 'Expected at most 52428800 bytes but received 60000000' }
 */
export function checkImageBytes(size: number): ImageRefusal | null {
  if (size <= MAX_IMAGE_BYTES) return null
  return { code: 'image_too_large', message: `Expected at most ${MAX_IMAGE_BYTES} bytes but received ${size}` }
}

/**
 * Checks sniffed dimensions against SPEC.md §8; `null` when they are acceptable.
 * @example
 * checkDimensions(6000, 5000)
 * // { code: 'image_too_large', message: 'Expected at most 25 megapixels but the image is 6000×5000' }
 */
export function checkDimensions(width: number, height: number): ImageRefusal | null {
  const size = `${width}×${height}`
  if (width * height > MAX_PIXELS) {
    return {
      code: 'image_too_large',
      message: `Expected at most ${MAX_PIXELS / 1e6} megapixels but the image is ${size}`,
    }
  }
  if (width < MIN_SIDE || height < MIN_SIDE) {
    return {
      code: 'invalid_input',
      message: `Expected at least ${MIN_SIDE}×${MIN_SIDE} pixels but the image is ${size}`,
    }
  }
  return null
}

/**
 * What the header alone refuses ({@link sniffImage}'s answer): not a supported type, or dimensions
 * out of bounds; `null` when it passes. Dimensions a header does not give are the decoder's to check.
 */
export function checkSniffedImage(sniffed: SniffedImage | null): ImageRefusal | null {
  if (!sniffed) return { code: 'unsupported_media', message: 'Expected a JPEG, PNG, WebP, AVIF, HEIC or HEIF image' }
  return sniffed.width && sniffed.height ? checkDimensions(sniffed.width, sniffed.height) : null
}
