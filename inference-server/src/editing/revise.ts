/**
 * `/v1/revise`: a base mask plus brush strokes → the revision's mask, an 8-bit greyscale PNG at
 * the source's size. The base is scaled to that size first when it differs (a preview job's
 * mask, say); the strokes are then rasterised at full resolution (`strokes.ts`).
 */
import type { ReviseRequest } from '../../../src/contract/editing.js'
import { encodeMaskPng } from '../imaging/encode.js'
import { decodeMaskPart, resizeMask } from '../imaging/mask-part.js'
import type { OnStage } from '../remove.js'
import { stepTimer } from '../timings.js'
import { applyStrokes } from './strokes.js'

/** Revisions are stored and read many times: the default zlib level, not the fastest. */
const COMPRESSION_LEVEL = 6

export interface ReviseResult {
  png: Buffer
  width: number
  height: number
  /** decode, render, encode: milliseconds each. */
  timings: Record<string, number>
}

/**
 * Renders a revision's mask.
 * @throws {InferenceError} `invalid_input` when the base mask does not decode
 * @example await reviseMask(basePng, { width: 512, height: 512, strokes: [] })
 */
export async function reviseMask(
  base: Uint8Array,
  request: ReviseRequest,
  onStage: OnStage = () => {},
): Promise<ReviseResult> {
  const { timings, timed } = stepTimer()
  const mask = await timed('decode', async () => resizeMask(await decodeMaskPart(base), request.width, request.height))
  onStage('rendering')
  await timed('render', () => applyStrokes(mask, request.strokes))
  const png = await timed('encode', () => encodeMaskPng(mask, { compressionLevel: COMPRESSION_LEVEL }))
  return { png, width: mask.width, height: mask.height, timings }
}
