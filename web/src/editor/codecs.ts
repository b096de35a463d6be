/**
 * The two files the editor reads as bytes rather than through a canvas, so a 12 MP photo's mask
 * never needs a full-size canvas: a revision's mask (an 8-bit greyscale PNG, DESIGN.md §3
 * Projects) and the zip export whose `color.jpg` is the photo (remove.bg's convention, upright at
 * the project's size). Inflating is the browser's own `DecompressionStream`.
 */

/** A W×H mask, one byte a pixel (0 background … 255 subject), row by row. */
export interface Mask {
  width: number
  height: number
  data: Uint8Array
}

async function inflate(bytes: Uint8Array, format: 'deflate' | 'deflate-raw'): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream(format))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

const PNG_SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10]

/**
 * Decodes an 8-bit greyscale, non-interlaced PNG (what the API's mask routes answer) to its bytes.
 * @throws Error for any other PNG: the mask would be misread rather than shown.
 */
export async function decodeGrayPng(png: Uint8Array): Promise<Mask> {
  if (!PNG_SIGNATURE.every((b, i) => png[i] === b)) throw new Error('The mask is not a PNG')
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  let width = 0
  let height = 0
  const idat: Uint8Array[] = []
  for (let at = 8; at + 8 <= png.length; ) {
    const length = view.getUint32(at)
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8))
    const body = png.subarray(at + 8, at + 8 + length)
    if (type === 'IHDR') {
      width = view.getUint32(at + 8)
      height = view.getUint32(at + 12)
      const [depth, colour, , , interlace] = body.subarray(8, 13)
      if (depth !== 8 || colour !== 0 || interlace !== 0) throw new Error('The mask is not an 8-bit greyscale PNG')
    } else if (type === 'IDAT') idat.push(body)
    else if (type === 'IEND') break
    at += 12 + length
  }
  const packed = new Uint8Array(idat.reduce((n, c) => n + c.length, 0))
  let offset = 0
  for (const chunk of idat) {
    packed.set(chunk, offset)
    offset += chunk.length
  }
  return { width, height, data: unfilter(await inflate(packed, 'deflate'), width, height) }
}

/** Undoes PNG's per-row filters (one byte a pixel, so the left neighbour is one byte back). */
function unfilter(raw: Uint8Array, width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (width + 1)]
    const src = y * (width + 1) + 1
    const row = y * width
    const up = row - width
    for (let x = 0; x < width; x++) {
      const a = x > 0 ? out[row + x - 1] : 0
      const b = y > 0 ? out[up + x] : 0
      const c = x > 0 && y > 0 ? out[up + x - 1] : 0
      let predicted = 0
      if (filter === 1) predicted = a
      else if (filter === 2) predicted = b
      else if (filter === 3) predicted = (a + b) >> 1
      else if (filter === 4) predicted = paeth(a, b, c)
      out[row + x] = (raw[src + x] + predicted) & 0xff
    }
  }
  return out
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}

/** One file of a zip archive (stored or deflated), found through its central directory. */
export async function unzipEntry(zip: Uint8Array, name: string): Promise<Uint8Array> {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  let end = zip.length - 22
  while (end >= 0 && view.getUint32(end, true) !== 0x06054b50) end--
  if (end < 0) throw new Error('Not a zip archive')
  const count = view.getUint16(end + 10, true)
  let at = view.getUint32(end + 16, true)
  for (let i = 0; i < count; i++) {
    const method = view.getUint16(at + 10, true)
    const size = view.getUint32(at + 20, true)
    const nameLength = view.getUint16(at + 28, true)
    const skip = nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
    const local = view.getUint32(at + 42, true)
    if (new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength)) === name) {
      const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
      const data = zip.subarray(start, start + size)
      return method === 0 ? data : inflate(data, 'deflate-raw')
    }
    at += 46 + skip
  }
  throw new Error(`The archive has no ${name}`)
}
