/**
 * Image → model input. ISNet takes a [1, 3, H, W] float32 tensor, 1024×1024 as exported (the
 * size-agnostic graph, graph.ts, also takes other sides that are multiples of 64), built the way
 * @imgly/background-removal-node builds it: RGB stretched to the input size with its bilinear
 * (see resize.ts), planar NCHW, each value (v − 128) / 256.
 */
import type { RgbImage } from '../imaging/types.js'
import { resizeTable } from './resize.js'

export const MODEL_SIZE = 1024

/** The model's input height and width for one run. */
export interface InputSize {
  width: number
  height: number
}

/** The export's own input: what `balanced` always runs, bit for bit the reference package. */
export const NATIVE_INPUT: InputSize = { width: MODEL_SIZE, height: MODEL_SIZE }
const MEAN = 128
const STD = 256

/**
 * Fills the NCHW tensor straight from interleaved RGB: the resize, the rounding and the
 * normalisation happen in one pass over the 1024² output, never at source resolution.
 * @example const input = toInputTensor({ data, width: 512, height: 512, channels: 3 });
 */
export function toInputTensor(image: RgbImage, input: InputSize = NATIVE_INPUT): Float32Array {
  const { data, width, height, channels } = image
  const plane = input.width * input.height
  const tensor = new Float32Array(3 * plane)
  const xs = resizeTable(width, input.width)
  const ys = resizeTable(height, input.height)
  for (let y = 0; y < input.height; y++) {
    const row1 = ys.lo[y] * width
    const row2 = ys.hi[y] * width
    const dy = ys.frac[y]
    for (let x = 0; x < input.width; x++) {
      const dx = xs.frac[x]
      const p1 = (row1 + xs.lo[x]) * channels
      const p2 = (row1 + xs.hi[x]) * channels
      const p3 = (row2 + xs.lo[x]) * channels
      const p4 = (row2 + xs.hi[x]) * channels
      const o = y * input.width + x
      for (let c = 0; c < 3; c++) {
        const v =
          (1 - dx) * (1 - dy) * data[p1 + c] +
          dx * (1 - dy) * data[p2 + c] +
          (1 - dx) * dy * data[p3 + c] +
          dx * dy * data[p4 + c]
        tensor[c * plane + o] = (Math.round(v) - MEAN) / STD
      }
    }
  }
  return tensor
}
