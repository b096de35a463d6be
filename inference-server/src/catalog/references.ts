/**
 * The reference parts of `POST /v1/catalog`, decoded as `/v1/remove` decodes its image (EXIF
 * orientation, ICC to sRGB, 16-bit and grey to 8-bit RGB, first frame): the same errors, 415 for
 * bytes that are no accepted image, 413 over 25 MP, 400 under 32×32 or corrupt, their message
 * starting with the field that names the reference (`references.2: …`, the shared contract's
 * `referenceField`), or the part's name when it has none (try-on's `person`, `garment`).
 */
import { InferenceError, toInferenceError } from '../errors.js'
import { decodeImage, inspectHeader } from '../imaging/decode.js'
import type { RgbImage } from '../imaging/types.js'

/** A reference as received: its part name (`reference-0`, the front, …) and its bytes. */
export interface CatalogReference {
  name: string
  bytes: Uint8Array
  /** What an error about it names (`references.0`); its part name when absent. */
  field?: string
}

/**
 * A check decodes every pixel (a truncated file fails only there) but keeps a thumbnail of at
 * most this many, so four 25 MP references cost no more memory than one small image.
 */
const CHECK_PIXELS = 64 * 64

/** The same error, its message prefixed with the part's name. */
function naming(name: string, err: unknown): InferenceError {
  const error = toInferenceError(err)
  return new InferenceError(error.code, `${name}: ${error.message}`, { cause: err })
}

/**
 * Checks every reference before any work: the headers (format, size) of all first, then each one
 * decoded to its last byte. A bad back view fails the request before the front is segmented,
 * even with `layout=hero`, which draws only the front: the user sent it and pays for the image.
 * @throws {InferenceError} 415/413/400 naming the reference
 */
export async function checkReferences(references: CatalogReference[]): Promise<void> {
  for (const reference of references) {
    await inspectHeader(reference.bytes).catch((err) => Promise.reject(naming(labelOf(reference), err)))
  }
  for (const reference of references) {
    await decodeImage(reference.bytes, { maxPixels: CHECK_PIXELS }).catch((err) =>
      Promise.reject(naming(labelOf(reference), err)),
    )
  }
}

const labelOf = (reference: CatalogReference) => reference.field ?? reference.name

/**
 * Decodes one reference to upright 8-bit sRGB.
 * @throws {InferenceError} 415/413/400 naming the reference
 * @example const image = await decodeReference({ name: 'reference-0', bytes })
 */
export async function decodeReference(reference: CatalogReference): Promise<RgbImage> {
  try {
    return (await decodeImage(reference.bytes)).image
  } catch (err) {
    throw naming(labelOf(reference), err)
  }
}
