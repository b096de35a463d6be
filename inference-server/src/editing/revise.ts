/**
 * `/v1/revise`: a base mask plus brush strokes → the revision's mask, an 8-bit greyscale PNG at
 * the source's size. The base is scaled to that size first when it differs (a preview job's
 * mask, say); the strokes are then rasterised at full resolution (`strokes.ts`).
 */
import type { ReviseRequest } from '../../../src/contract/editing.js'
import { encodeMaskPng } from '../imaging/encode.js'
import { decodeMaskPart, resizeMask } from '../imaging/mask-part.js'
import type { OnStage } from '../remove.js'
import { applyStrokes } from './strokes.js'

/** Revisions are stored and read many times: the default zlib level, not the fastest. */
const COMPRESSION_LEVEL = 6

export interface ReviseResult {
  png: Buffer
  width: number
  height: number
  timings: { decode: number; render: number; encode: number }
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
  let started = performance.now()
  const lap = () => {
    const now = performance.now()
    const ms = now - started
    started = now
    return ms
  }
  const mask = resizeMask(await decodeMaskPart(base), request.width, request.height)
  const decode = lap()
  onStage('rendering')
  await applyStrokes(mask, request.strokes)
  const render = lap()
  const png = await encodeMaskPng(mask, { compressionLevel: COMPRESSION_LEVEL })
  return { png, width: mask.width, height: mask.height, timings: { decode, render, encode: lap() } }
}
