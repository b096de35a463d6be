import { describe, expect, it } from 'vitest'
import {
  checkDimensions,
  checkImageBytes,
  checkSniffedImage,
  MAX_IMAGE_BYTES,
  MAX_PIXELS,
  MIN_SIDE,
  sniffImage,
} from '../../src/lib/image-sniff'
import { HEADERS } from '../fixtures/headers'

const bytes = (...parts: (number[] | string)[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)))
const u32 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
const u16 = (n: number) => [n >> 8, n & 255]
/** An ISO-BMFF box: size, type, payload. */
const box = (type: string, ...payload: (number[] | string)[]) => {
  const body = bytes(...payload)
  return [...u32(body.length + 8), ...bytes(type), ...body]
}
const fullBox = (type: string, ...payload: (number[] | string)[]) => box(type, [0, 0, 0, 0], ...payload)
const ispe = (w: number, h: number) => fullBox('ispe', u32(w), u32(h))
const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

describe('sniffImage on the shared 512×512 fixtures', () => {
  it.each([
    ['jpeg', 'image/jpeg'],
    ['png', 'image/png'],
    ['webp', 'image/webp'],
    ['avif', 'image/avif'],
    ['heic', 'image/heic'],
  ] as const)('%s', (key, mimeType) => {
    expect(sniffImage(HEADERS[key])).toEqual({ mimeType, width: 512, height: 512 })
  })

  it('gives the type without dimensions when the header is cut short', () => {
    expect(sniffImage(HEADERS.heic.subarray(0, 200))).toEqual({ mimeType: 'image/heic' })
    expect(sniffImage(HEADERS.jpeg.subarray(0, 100))).toEqual({ mimeType: 'image/jpeg' })
    expect(sniffImage(HEADERS.png.subarray(0, 8))).toEqual({ mimeType: 'image/png' })
  })
})

describe('sniffImage on hand-made headers', () => {
  it('reads a PNG IHDR claiming 6000×5000', () => {
    const png = bytes(PNG_SIG, u32(13), 'IHDR', u32(6000), u32(5000), [8, 6, 0, 0, 0])
    expect(sniffImage(png)).toEqual({ mimeType: 'image/png', width: 6000, height: 5000 })
  })

  it('skips APPn segments and fill bytes to a progressive SOF2', () => {
    const jpeg = bytes(
      [0xff, 0xd8],
      [0xff, 0xe0],
      u16(16),
      'JFIF',
      [0, 1, 1, 0, 0, 1, 0, 1, 0, 0],
      [0xff, 0xe1],
      u16(10),
      'Exif',
      [0, 0, 0, 0], // APP1
      [0xff, 0xff], // fill byte
      [0xff, 0xc2],
      u16(17),
      [8],
      u16(480),
      u16(640),
      [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1],
    )
    expect(sniffImage(jpeg)).toEqual({ mimeType: 'image/jpeg', width: 640, height: 480 })
  })

  it('stops at SOS when no frame header came first', () => {
    const jpeg = bytes([0xff, 0xd8, 0xff, 0xda], u16(8), [1, 2, 3, 4, 5, 6])
    expect(sniffImage(jpeg)).toEqual({ mimeType: 'image/jpeg' })
  })

  it('reads WebP VP8L (lossless) and VP8X (extended) sizes', () => {
    const bits = (300 - 1) | ((200 - 1) << 14)
    const le32 = [bits & 255, (bits >> 8) & 255, (bits >> 16) & 255, bits >>> 24]
    const vp8l = bytes('RIFF', u32(0), 'WEBPVP8L', u32(0), [0x2f], le32)
    expect(sniffImage(vp8l)).toEqual({ mimeType: 'image/webp', width: 300, height: 200 })
    const w = 4000 - 1
    const h = 3000 - 1
    const vp8x = bytes(
      'RIFF',
      u32(0),
      'WEBPVP8X',
      u32(10),
      [0x10, 0, 0, 0],
      [w & 255, (w >> 8) & 255, w >> 16],
      [h & 255, (h >> 8) & 255, h >> 16],
    )
    expect(sniffImage(vp8x)).toEqual({ mimeType: 'image/webp', width: 4000, height: 3000 })
  })

  it('classifies ISO-BMFF by major, then compatible brands', () => {
    const ftyp = (major: string, ...compat: string[]) => bytes(box('ftyp', major, u32(0), ...compat))
    expect(sniffImage(ftyp('mif1', 'mif1', 'miaf'))).toEqual({ mimeType: 'image/heif' })
    expect(sniffImage(ftyp('msf1', 'msf1'))).toEqual({ mimeType: 'image/heif' })
    expect(sniffImage(ftyp('mif1', 'mif1', 'avif'))).toEqual({ mimeType: 'image/avif' })
    expect(sniffImage(ftyp('avis', 'msf1'))).toEqual({ mimeType: 'image/avif' })
    expect(sniffImage(ftyp('mif1', 'heix'))).toEqual({ mimeType: 'image/heic' })
    expect(sniffImage(ftyp('isom', 'isom', 'mp41'))).toBeNull() // an MP4 video
  })

  it('takes the largest ispe in meta/iprp/ipco (thumbnail first)', () => {
    const heif = bytes(
      box('ftyp', 'heic', u32(0), 'mif1', 'heic'),
      fullBox(
        'meta',
        fullBox('hdlr', u32(0), 'pict', u32(0), u32(0), u32(0), [0]),
        box('iprp', box('ipco', ispe(160, 120), box('colr', 'nclx', [0, 1, 2]), ispe(4032, 3024))),
      ),
    )
    expect(sniffImage(heif)).toEqual({ mimeType: 'image/heic', width: 4032, height: 3024 })
  })

  it('returns null for non-images', () => {
    expect(sniffImage(new TextEncoder().encode('hello, this is not a png at all'))).toBeNull()
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"/>'
    expect(sniffImage(new TextEncoder().encode(svg))).toBeNull()
    expect(sniffImage(bytes('GIF89a', [1, 0, 1, 0]))).toBeNull()
    expect(sniffImage(bytes('RIFF', u32(0), 'WAVEfmt '))).toBeNull()
    expect(sniffImage(new Uint8Array(0))).toBeNull()
  })
})

describe('limits', () => {
  it('match SPEC.md §8', () => {
    expect([MAX_IMAGE_BYTES, MAX_PIXELS, MIN_SIDE]).toEqual([52_428_800, 25_000_000, 32])
  })

  it('words its refusals as the API answers them (and @cutout/sdk refuses before uploading)', () => {
    expect(checkDimensions(512, 512)).toBeNull()
    expect(checkDimensions(5000, 5000)).toBeNull()
    expect(checkDimensions(6336, 3960)).toEqual({
      code: 'image_too_large',
      message: 'Expected at most 25 megapixels but the image is 6336×3960',
    })
    expect(checkDimensions(31, 512)).toEqual({
      code: 'invalid_input',
      message: 'Expected at least 32×32 pixels but the image is 31×512',
    })
    expect(checkImageBytes(MAX_IMAGE_BYTES)).toBeNull()
    expect(checkImageBytes(MAX_IMAGE_BYTES + 1)).toEqual({
      code: 'image_too_large',
      message: 'Expected at most 52428800 bytes but received 52428801',
    })
    expect(checkSniffedImage(sniffImage(bytes('just some text')))).toEqual({
      code: 'unsupported_media',
      message: 'Expected a JPEG, PNG, WebP, AVIF, HEIC or HEIF image',
    })
    expect(checkSniffedImage({ mimeType: 'image/jpeg' })).toBeNull() // no dimensions: the decoder checks them
    expect(checkSniffedImage({ mimeType: 'image/png', width: 16, height: 16 })?.code).toBe('invalid_input')
  })
})
