/**
 * A render's bytes in each export format (DESIGN.md §3 Exports):
 *
 * - png: the RGBA render (the cutout over the background);
 * - webp: lossless when any pixel is not opaque (alpha edges must not smear), else quality 90;
 * - jpeg: flattened on the background colour, white when transparent (quality 90);
 * - zip (remove.bg's convention): `color.jpg`, the photo's colours over the rendered area with the
 *   background colour (or white) where the photo does not reach, and `alpha.png`, the subject's
 *   alpha as an 8-bit greyscale PNG, both the rendered size;
 * - psd: `psd.ts`.
 *
 * Same render, same bytes: the encoders are deterministic and the zip's entries carry a fixed time.
 */
import { zipSync } from 'fflate'
import sharp from 'sharp'
import type { ExportFormat } from '../../../src/contract/editing.js'
import { encodeMaskPng } from '../imaging/encode.js'
import { composite, flatten, type Layers, opaqueBackground, photoCoverage, type Rgba } from './canvas.js'
import { encodePsd } from './psd.js'

const PNG = { compressionLevel: 6, adaptiveFiltering: false } as const
const LOSSY_QUALITY = 90
/** Zip entries' time: DOS time has no zone and starts in 1980; local midnight reads the same everywhere. */
const ZIP_TIME = new Date(1980, 0, 1)

const raw = (data: Uint8Array, width: number, height: number, channels: 3 | 4) =>
  sharp(data, { raw: { width, height, channels } })

function hasTransparency(rgba: Uint8Array): boolean {
  for (let j = 3; j < rgba.length; j += 4) if (rgba[j] !== 255) return true
  return false
}

/** Drops the alpha of an opaque RGBA render. */
function toRgb(rgba: Uint8Array): Uint8Array {
  const out = new Uint8Array((rgba.length / 4) * 3)
  for (let i = 0, j = 0; j < rgba.length; i += 3, j += 4) {
    out[i] = rgba[j]
    out[i + 1] = rgba[j + 1]
    out[i + 2] = rgba[j + 2]
  }
  return out
}

async function encodeWebp(layers: Layers, bg: Rgba | null): Promise<Buffer> {
  const { width, height } = layers
  const rgba = composite(layers, bg)
  if (hasTransparency(rgba)) return raw(rgba, width, height, 4).webp({ lossless: true }).toBuffer()
  return raw(toRgb(rgba), width, height, 3).webp({ quality: LOSSY_QUALITY }).toBuffer()
}

const jpeg = (rgb: Uint8Array, width: number, height: number) =>
  raw(rgb, width, height, 3).jpeg({ quality: LOSSY_QUALITY }).toBuffer()

async function encodeZip(layers: Layers, bg: Rgba | null): Promise<Uint8Array> {
  const { width, height, rgb, alpha } = layers
  const color = await jpeg(flatten(rgb, photoCoverage(layers), opaqueBackground(bg)), width, height)
  const alphaPng = await encodeMaskPng({ data: alpha, width, height }, PNG)
  // Both are compressed already: stored, not deflated again.
  const entry = (bytes: Uint8Array) => [bytes, { level: 0, mtime: ZIP_TIME }] as [Uint8Array, { level: 0; mtime: Date }]
  return zipSync({ 'color.jpg': entry(color), 'alpha.png': entry(alphaPng) })
}

/**
 * Encodes a render in `format`.
 * @example await encodeExport('jpeg', layers, { r: 255, g: 0, b: 0, a: 255 })
 */
export async function encodeExport(format: ExportFormat, layers: Layers, bg: Rgba | null): Promise<Uint8Array> {
  const { width, height } = layers
  switch (format) {
    case 'png':
      return raw(composite(layers, bg), width, height, 4).png(PNG).toBuffer()
    case 'webp':
      return encodeWebp(layers, bg)
    case 'jpeg':
      return jpeg(flatten(layers.rgb, layers.alpha, opaqueBackground(bg)), width, height)
    case 'zip':
      return encodeZip(layers, bg)
    case 'psd':
      return encodePsd(layers, bg)
  }
}
