/**
 * @module
 * The base revision's mask, as the edge sends it: an 8-bit greyscale PNG at the decoded source's
 * size (a PNG with an alpha channel is read by its alpha). It is never scaled: the refinement's
 * promise is that every pixel outside its region comes back byte for byte, which only means
 * something when the base is at the source's own size.
 */
import sharp from 'sharp'
import { MAX_PIXELS } from '../../../src/contract/limits.js'
import { InferenceError } from '../errors.js'
import type { Mask } from '../imaging/types.js'

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

/**
 * Decodes the `mask` part and checks it is `width`×`height`.
 * @throws {InferenceError} `invalid_input` when it is not a PNG, does not decode, or has another size
 * @example const base = await decodeMaskPng(parts.get('mask'), image.width, image.height);
 */
export async function decodeMaskPng(bytes: Uint8Array, width: number, height: number): Promise<Mask> {
  if (bytes.length < 8 || PNG_SIGNATURE.some((b, i) => bytes[i] !== b)) {
    throw new InferenceError('invalid_input', 'Expected the mask part to be a PNG')
  }
  try {
    const input = sharp(bytes, { failOn: 'warning', limitInputPixels: MAX_PIXELS })
    const meta = await input.metadata()
    if (meta.width !== width || meta.height !== height) {
      throw new InferenceError(
        'invalid_input',
        `Expected the mask at the image's size ${width}×${height} but received ${meta.width}×${meta.height}`,
      )
    }
    // 16-bit greyscale comes down to 8 bits; the alpha is the mask when there is one.
    const channel = (meta.hasAlpha ? (meta.channels ?? 1) - 1 : 0) as 0 | 1 | 2 | 3
    const { data, info } = await input
      .extractChannel(channel)
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true })
    if (info.channels !== 1) throw new Error(`expected 1 channel, got ${info.channels}`)
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width, height }
  } catch (err) {
    if (err instanceof InferenceError) throw err
    const detail = err instanceof Error ? err.message : String(err)
    throw new InferenceError('invalid_input', `Could not decode the mask PNG: ${detail.trim()}`, { cause: err })
  }
}
