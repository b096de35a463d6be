/**
 * Model output → mask at source size. The output is already in 0..1 (no sigmoid needed).
 */
import type { InputSize } from './preprocess.js'
import { resizePlane } from './resize.js'

/**
 * Quantises the model's float plane to 8 bits by truncation, as the reference package does
 * (a Uint8Array store of v × 255), so equal model outputs give equal masks.
 */
export function quantizeMask(output: Float32Array): Uint8Array {
  const mask = new Uint8Array(output.length)
  for (let i = 0; i < output.length; i++) mask[i] = output[i] * 255
  return mask
}

/**
 * Scales the model mask (`size` square, or the input size it was run at) back to the source size
 * with the reference bilinear.
 * @example toSourceMask(output, 1024, 512, 512) // Uint8Array(512 * 512), 0 = background
 */
export function toSourceMask(
  output: Float32Array,
  size: number | InputSize,
  width: number,
  height: number,
): Uint8Array {
  const input = typeof size === 'number' ? { width: size, height: size } : size
  return resizePlane(quantizeMask(output), input.width, input.height, width, height)
}
