/**
 * A render's pixels at the canvas size (`layout.ts`): the photo's colours and the subject's alpha
 * where the photo lands, nothing elsewhere; then the recipe's background under them. Every
 * format is made from these planes. The photo is scaled with sharp (lanczos3), the alpha with
 * `resizeMask` (no ringing at hard mask edges); both map the same rectangles.
 */
import sharp from 'sharp'
import type { Recipe } from '../../../src/contract/editing.js'
import { resizeMask } from '../imaging/mask-part.js'
import { cropPlane } from '../imaging/plane.js'
import type { Mask, RgbImage } from '../imaging/types.js'
import type { Rect } from './crop.js'
import type { Layout } from './layout.js'

/** The recipe's background colour, or null for transparent. */
export interface Rgba {
  r: number
  g: number
  b: number
  a: number
}

export interface Layers {
  width: number
  height: number
  /** Canvas RGB: the photo's colours inside `target`, 0 outside. */
  rgb: Uint8Array
  /** The subject's alpha: the mask inside `target`, 0 outside. */
  alpha: Uint8Array
  /** The canvas pixels the photo covers. */
  target: Rect
}

/** `#RRGGBB[AA]` → channels; transparent (or no background) → null. */
export function backgroundColour(background: Recipe['background']): Rgba | null {
  if (!background || background.type === 'transparent') return null
  const hex = (at: number) => Number.parseInt(background.color.slice(at, at + 2), 16)
  return { r: hex(1), g: hex(3), b: hex(5), a: background.color.length === 9 ? hex(7) : 255 }
}

/** The opaque colour formats without alpha flatten on: the background over white, or white. */
export function opaqueBackground(bg: Rgba | null): Rgba {
  if (!bg) return { r: 255, g: 255, b: 255, a: 255 }
  const over = (c: number) => Math.round((c * bg.a + 255 * (255 - bg.a)) / 255)
  return { r: over(bg.r), g: over(bg.g), b: over(bg.b), a: 255 }
}

/** Pastes a `rect`-sized plane into a canvas `width` wide at `rect`. */
function pastePlane(canvas: Uint8Array, width: number, channels: number, plane: Uint8Array, rect: Rect): void {
  const rowBytes = rect.width * channels
  for (let y = 0; y < rect.height; y++) {
    canvas.set(plane.subarray(y * rowBytes, (y + 1) * rowBytes), ((rect.y + y) * width + rect.x) * channels)
  }
}

/** The photo's part, at the target's size. */
async function scalePhoto(image: RgbImage, source: Rect, target: Rect): Promise<Uint8Array> {
  if (source.width === target.width && source.height === target.height) {
    return cropPlane(image.data, image.width, 3, source)
  }
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .extract({ left: source.x, top: source.y, width: source.width, height: source.height })
    .resize(target.width, target.height, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer({ resolveWithObject: true })
  if (info.channels !== 3) throw new Error(`expected 3 channels after resize, got ${info.channels}`)
  return new Uint8Array(data.buffer, data.byteOffset, data.length)
}

/**
 * Draws the photo and its alpha onto a canvas per `layout`.
 * @example const layers = await renderLayers(image, mask, planLayout(image, box, recipe))
 */
export async function renderLayers(image: RgbImage, mask: Mask, layout: Layout): Promise<Layers> {
  const { width, height, source, target } = layout
  const rgb = new Uint8Array(width * height * 3)
  const alpha = new Uint8Array(width * height)
  pastePlane(rgb, width, 3, await scalePhoto(image, source, target), target)
  const part = { data: cropPlane(mask.data, mask.width, 1, source), width: source.width, height: source.height }
  pastePlane(alpha, width, 1, resizeMask(part, target.width, target.height).data, target)
  return { width, height, rgb, alpha, target }
}

/**
 * The render as RGBA: the subject over the background (Porter-Duff over, not premultiplied);
 * on a transparent background, fully transparent pixels carry colour 0.
 */
export function composite({ rgb, alpha }: Layers, bg: Rgba | null): Uint8Array {
  const n = alpha.length
  const out = new Uint8Array(n * 4)
  for (let k = 0, i = 0, j = 0; k < n; k++, i += 3, j += 4) {
    const a = alpha[k]
    if (!bg) {
      if (a === 0) continue
      out[j] = rgb[i]
      out[j + 1] = rgb[i + 1]
      out[j + 2] = rgb[i + 2]
      out[j + 3] = a
      continue
    }
    // In 255ths: the subject's weight is a·255, the background's bg.a·(255 − a).
    const fw = a * 255
    const bw = bg.a * (255 - a)
    const total = fw + bw
    out[j + 3] = Math.round(total / 255)
    if (total === 0) continue
    out[j] = Math.round((rgb[i] * fw + bg.r * bw) / total)
    out[j + 1] = Math.round((rgb[i + 1] * fw + bg.g * bw) / total)
    out[j + 2] = Math.round((rgb[i + 2] * fw + bg.b * bw) / total)
  }
  return out
}

/** The render as opaque RGB on `colour` (JPEG). With `alpha` 255 everywhere the photo is, it is the photo. */
export function flatten(rgb: Uint8Array, alpha: Uint8Array, colour: Rgba): Uint8Array {
  const out = new Uint8Array(rgb.length)
  for (let k = 0, i = 0; k < alpha.length; k++, i += 3) {
    const a = alpha[k]
    out[i] = Math.round((rgb[i] * a + colour.r * (255 - a)) / 255)
    out[i + 1] = Math.round((rgb[i + 1] * a + colour.g * (255 - a)) / 255)
    out[i + 2] = Math.round((rgb[i + 2] * a + colour.b * (255 - a)) / 255)
  }
  return out
}

/** 255 where the photo is, 0 elsewhere: the photo's own coverage of the canvas. */
export function photoCoverage({ width, height, target }: Layers): Uint8Array {
  const out = new Uint8Array(width * height)
  for (let y = target.y; y < target.y + target.height; y++) {
    out.fill(255, y * width + target.x, y * width + target.x + target.width)
  }
  return out
}
