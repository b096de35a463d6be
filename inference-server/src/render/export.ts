/**
 * `/v1/export`: a photo and a revision's mask, rendered per a recipe into one export format.
 * decode (the photo upright, as the mask was made; the mask scaled to it if its size differs)
 * → layout (`layout.ts`) → pixels (`canvas.ts`) → bytes (`formats.ts`).
 */
import { EXPORT_CONTENT_TYPES, type ExportRequest } from '../../../src/contract/editing.js'
import { decodeImage } from '../imaging/decode.js'
import { decodeMaskPart, resizeMask } from '../imaging/mask-part.js'
import type { OnStage } from '../remove.js'
import { stepTimer } from '../timings.js'
import { backgroundColour, renderLayers } from './canvas.js'
import { subjectBox } from './crop.js'
import { encodeExport } from './formats.js'
import { planLayout } from './layout.js'

export interface ExportResult {
  bytes: Uint8Array
  contentType: string
  width: number
  height: number
  /** decode, render, encode: milliseconds each. */
  timings: Record<string, number>
}

/**
 * Renders an export.
 * @throws {InferenceError} 400/413/415 for a bad photo or mask, 413 for a recipe over the render limit
 * @example await renderExport(photo, maskPng, { format: 'png', recipe: { version: 1, crop: true } })
 */
export async function renderExport(
  photoBytes: Uint8Array,
  maskBytes: Uint8Array,
  { format, recipe }: ExportRequest,
  onStage: OnStage = () => {},
): Promise<ExportResult> {
  const { timings, timed } = stepTimer()
  const { image } = await timed('decode', () => decodeImage(photoBytes))
  const mask = await timed('decode', async () => resizeMask(await decodeMaskPart(maskBytes), image.width, image.height))
  onStage('rendering')
  const layout = await timed('render', () => planLayout(image, recipe.crop ? subjectBox(mask) : null, recipe))
  const layers = await timed('render', () => renderLayers(image, mask, layout))
  const bytes = await timed('encode', () => encodeExport(format, layers, backgroundColour(recipe.background)))
  return { bytes, contentType: EXPORT_CONTENT_TYPES[format], width: layout.width, height: layout.height, timings }
}
