/**
 * The reference parts of `POST /v1/catalog`, decoded as `/v1/remove` decodes its image (EXIF
 * orientation, ICC to sRGB, 16-bit and grey to 8-bit RGB, first frame): the same errors, 415 for
 * bytes that are no accepted image, 413 over 25 MP, 400 under 32×32 or corrupt, their message
 * starting with the part's name (`reference-2: …`).
 */
import { InferenceError, toInferenceError } from '../errors.js'
import { decodeImage, inspectHeader } from '../imaging/decode.js'
import type { RgbImage } from '../imaging/types.js'

/** A reference as received: its part name (`reference-0`, the front, …) and its bytes. */
export interface CatalogReference {
  name: string
  bytes: Uint8Array
}

/** The same error, its message prefixed with the part's name. */
function naming(name: string, err: unknown): InferenceError {
  const error = toInferenceError(err)
  return new InferenceError(error.code, `${name}: ${error.message}`, { cause: err })
}

/**
 * Checks every reference's header (format, size) before any work: a bad back view fails the
 * request before the front is segmented.
 * @throws {InferenceError} 415/413/400 naming the part
 */
export async function checkReferences(references: CatalogReference[]): Promise<void> {
  for (const { name, bytes } of references) await inspectHeader(bytes).catch((err) => Promise.reject(naming(name, err)))
}

/**
 * Decodes one reference to upright 8-bit sRGB.
 * @throws {InferenceError} 415/413/400 naming the part
 * @example const image = await decodeReference({ name: 'reference-0', bytes })
 */
export async function decodeReference({ name, bytes }: CatalogReference): Promise<RgbImage> {
  try {
    return (await decodeImage(bytes)).image
  } catch (err) {
    throw naming(name, err)
  }
}
