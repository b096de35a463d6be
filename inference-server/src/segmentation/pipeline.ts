/**
 * @module
 * A profile's pre- and post-processing (profiles.ts) for every model but the built-in one, which
 * keeps its own bit-for-bit path (preprocess.ts, postprocess.ts).
 */
import type { RgbImage } from '../imaging/types.js'
import type { InputSize } from './preprocess.js'
import type { ModelProfile, SizeRule } from './profiles.js'
import { type Filter, resample } from './resample.js'

/**
 * The input size a rule gives for an image of this size.
 * @example inputSizeFor({ kind: 'short-side', side: 512, multiple: 32 }, 1200, 800) // { width: 768, height: 512 }
 */
export function inputSizeFor(rule: SizeRule, width: number, height: number): InputSize {
  if (rule.kind === 'fixed') return { width: rule.width, height: rule.height }
  const { side, multiple } = rule
  let w = width
  let h = height
  // MODNet's get_scale_factor, including its int() truncation.
  if (Math.max(width, height) < side || Math.min(width, height) > side) {
    if (width >= height) {
      h = side
      w = Math.trunc((width / height) * side)
    } else {
      w = side
      h = Math.trunc((height / width) * side)
    }
  }
  return { width: Math.max(multiple, w - (w % multiple)), height: Math.max(multiple, h - (h % multiple)) }
}

/** A profile's kernel as a PIL filter (the built-in `imgly` one never comes here). */
const filterOf = (kernel: ModelProfile['resize']): Filter => (kernel === 'imgly' ? 'bilinear' : kernel)

/**
 * The model's NCHW float32 input: the image resized with the profile's kernel, divided by 255 (or
 * by its own maximum, as rembg does), then (v − mean) / std per channel.
 */
export function profileInput(profile: ModelProfile, image: RgbImage, size: InputSize): Float32Array {
  const { width, height } = size
  const rgb = resample(image.data, image.width, image.height, 3, width, height, filterOf(profile.resize))
  let max = 255
  if (profile.scale === 'max') {
    max = 0
    for (let i = 0; i < rgb.length; i++) if (rgb[i] > max) max = rgb[i]
    max = Math.max(max, 1e-6)
  }
  const plane = width * height
  const tensor = new Float32Array(3 * plane)
  for (let c = 0; c < 3; c++) {
    const mean = profile.mean[c]
    const std = profile.std[c]
    for (let i = 0; i < plane; i++) tensor[c * plane + i] = (rgb[i * 3 + c] / max - mean) / std
  }
  return tensor
}

/** The output plane through the profile's activations (sigmoid, then min-max), in place. */
export function activate(profile: ModelProfile, plane: Float32Array): Float32Array {
  for (const step of profile.activation) {
    if (step === 'sigmoid') {
      for (let i = 0; i < plane.length; i++) plane[i] = 1 / (1 + Math.exp(-plane[i]))
      continue
    }
    let lo = Infinity
    let hi = -Infinity
    for (const v of plane) {
      if (v < lo) lo = v
      if (v > hi) hi = v
    }
    // A flat output has no foreground to stretch (numpy would divide by zero): all background.
    const range = hi - lo
    for (let i = 0; i < plane.length; i++) plane[i] = range > 0 ? (plane[i] - lo) / range : 0
  }
  return plane
}

/**
 * The mask at source size: the first plane of the output, activated, × 255 truncated to 8 bits
 * (clipped to 0..1 first, like rembg's U²-Net), resized with the profile's kernel back.
 */
export function profileMask(
  profile: ModelProfile,
  output: Float32Array,
  size: InputSize,
  width: number,
  height: number,
): Uint8Array {
  const plane = activate(profile, output.slice(0, size.width * size.height))
  const mask = new Uint8Array(plane.length)
  for (let i = 0; i < plane.length; i++) mask[i] = Math.trunc(Math.min(1, Math.max(0, plane[i])) * 255)
  return resample(mask, size.width, size.height, 1, width, height, filterOf(profile.resizeBack ?? profile.resize))
}
