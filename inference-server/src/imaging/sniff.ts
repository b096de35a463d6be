/**
 * Format detection from magic bytes only: the request's Content-Type is ignored (the edge
 * forwards whatever the client claimed), and sharp would happily open TIFF, GIF or SVG, which
 * the protocol does not accept.
 */
import type { ImageMime } from './types.js'

const ascii = (bytes: Uint8Array, start: number, end: number): string =>
  String.fromCharCode(...bytes.subarray(start, end))

/** ISO-BMFF brands (ftyp) of AVIF, of HEVC-coded HEIF (.heic) and of generic HEIF (.heif). */
const AVIF_BRANDS = new Set(['avif', 'avis'])
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'hevm', 'hevs'])
const HEIF_BRANDS = new Set(['mif1', 'msf1', 'mif2'])

function sniffIsoBmff(bytes: Uint8Array): ImageMime | undefined {
  if (bytes.length < 16 || ascii(bytes, 4, 8) !== 'ftyp') return undefined
  const boxSize = Math.min(new DataView(bytes.buffer, bytes.byteOffset).getUint32(0), bytes.length)
  const major = ascii(bytes, 8, 12)
  // Compatible brands follow the 4-byte minor version; a generic `mif1` file is told apart by them.
  const brands = [major]
  for (let o = 16; o + 4 <= boxSize; o += 4) brands.push(ascii(bytes, o, o + 4))
  if (AVIF_BRANDS.has(major)) return 'image/avif'
  if (HEIC_BRANDS.has(major)) return 'image/heic'
  if (HEIF_BRANDS.has(major)) return brands.some((b) => AVIF_BRANDS.has(b)) ? 'image/avif' : 'image/heif'
  if (brands.some((b) => AVIF_BRANDS.has(b))) return 'image/avif'
  if (brands.some((b) => HEIC_BRANDS.has(b) || HEIF_BRANDS.has(b))) return 'image/heif'
  return undefined
}

/**
 * The image type of `bytes`, or undefined when it is none we accept.
 * @example sniffImageType(await readFile('a.jpg')) // 'image/jpeg'
 */
export function sniffImageType(bytes: Uint8Array): ImageMime | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  if (bytes.length >= 8 && ascii(bytes, 0, 8) === '\x89PNG\r\n\x1a\n') return 'image/png'
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp'
  return sniffIsoBmff(bytes)
}
