/**
 * @module
 * Image inputs the SDK accepts everywhere (`Blob`/`File`, bytes, `ArrayBuffer`), the media type
 * of bytes that came without one, and the refusals the API is sure to answer, told before
 * anything is sent. Both read only the first bytes, with the API's own header sniffing
 * (./image-sniff.ts, a generated copy of the Worker's), so they say what the API would say.
 */
import { LOCAL_PROBLEMS } from './contract.js'
import { checkImageBytes, checkSniffedImage, type ImageRefusal, SNIFF_BYTES, sniffImage } from './image-sniff.js'
import { CutoutProblem } from './problem.js'

export type ImageInput = Blob | Uint8Array | ArrayBuffer

export async function toBlob(input: ImageInput): Promise<Blob> {
  if (input instanceof Blob) return input
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input)
  return new Blob([bytes as Uint8Array<ArrayBuffer>])
}

const head = async (blob: Blob) => new Uint8Array(await blob.slice(0, SNIFF_BYTES).arrayBuffer())

/** The image media type by signature, or `application/octet-stream` (the API sniffs it again). */
export async function sniffImageType(blob: Blob): Promise<string> {
  return sniffImage(await head(blob))?.mimeType ?? 'application/octet-stream'
}

/**
 * Refuses an image the API would refuse by its size and header alone (over 50 MB, not a JPEG,
 * PNG, WebP, AVIF, HEIC or HEIF, over 25 megapixels or under 32×32), as the problem it would
 * answer, in its words. Only the first bytes are read: nothing is decoded, and nothing is sent.
 * What only decoding shows (a corrupt body) is still the API's to refuse.
 * @param field the name the caller knows the image by, given as the problem's `field`
 * @throws {CutoutProblem} 413 `image_too_large`, 415 `unsupported_media` or 400 `invalid_input`
 * @example await checkImage(file) // throws image_too_large: Expected at most 25 megapixels but the image is 6336×3960
 */
export async function checkImage(blob: Blob, field?: string): Promise<void> {
  checkImageHead(blob.size, await head(blob), field)
}

/** {@link checkImage} of an image of `size` bytes that starts with `start` (its first {@link SNIFF_BYTES}). */
export function checkImageHead(size: number, start: Uint8Array, field?: string): void {
  const refusal = checkImageBytes(size) ?? checkSniffedImage(sniffImage(start))
  if (refusal) throw imageRefused(refusal, field)
}

function imageRefused({ code, message }: ImageRefusal, field?: string): CutoutProblem {
  const { status, title } = LOCAL_PROBLEMS[code]
  return new CutoutProblem(status, { code, title, detail: message, ...(field ? { field } : {}) })
}
