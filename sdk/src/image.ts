/**
 * @module
 * Image inputs the SDK accepts everywhere (`Blob`/`File`, bytes, `ArrayBuffer`) and the media type
 * of bytes that came without one, from their signature, so a presigned PUT names the right type.
 */

export type ImageInput = Blob | Uint8Array | ArrayBuffer

export async function toBlob(input: ImageInput): Promise<Blob> {
  if (input instanceof Blob) return input
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input)
  return new Blob([bytes as Uint8Array<ArrayBuffer>])
}

const ascii = (bytes: Uint8Array, start: number, end: number) => String.fromCharCode(...bytes.subarray(start, end))

/** The image media type by signature, or `application/octet-stream` (the API sniffs it again). */
export async function sniffImageType(blob: Blob): Promise<string> {
  const b = new Uint8Array(await blob.slice(0, 16).arrayBuffer())
  if (b[0] === 0x89 && ascii(b, 1, 4) === 'PNG') return 'image/png'
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'image/webp'
  if (ascii(b, 4, 8) === 'ftyp') {
    const brand = ascii(b, 8, 12)
    if (brand === 'avif' || brand === 'avis') return 'image/avif'
    if (/^(heic|heix|hevc|heim|heis)$/.test(brand)) return 'image/heic'
    if (brand === 'mif1' || brand === 'msf1') return 'image/heif'
  }
  return 'application/octet-stream'
}
