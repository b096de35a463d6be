/**
 * A subject brought to its size on the canvas. Colours: lanczos3 (sharp) when shrinking or
 * enlarging a little; past SR_MIN_FACTOR, the super-resolution model first (upscale.ts, at the
 * smallest of its scales that reaches the size, or its largest) and lanczos3 to the exact size. Alpha: the plain-arithmetic triangle filter of the editing routes (no ringing), its edge
 * steepened after a large enlargement so it stays about as sharp as the source's.
 */
import sharp from 'sharp'
import { resizeMask } from '../imaging/mask-part.js'
import type { Size } from './layout.js'
import type { Cutout } from './subject.js'
import { modelScaleFor, type Upscaler } from './upscale.js'

/**
 * Below this enlargement lanczos3 is used: the model's gain is small there and its cost is not
 * (a 600 px subject into 870 px costs seconds of wasm; see docs/catalog.md).
 */
export const SR_MIN_FACTOR = 1.5
/** The model's output is kept under this many pixels (its time grows with them); past it, lanczos3. */
export const SR_MAX_OUTPUT_PIXELS = 2048 * 2048

export interface Scaled extends Cutout {
  /** How the colours were enlarged: the model's scale, when it ran. */
  superResolution?: { scale: number; ms: number }
}

async function lanczos(rgb: Uint8Array, from: Size, to: Size): Promise<Uint8Array> {
  if (from.width === to.width && from.height === to.height) return rgb
  const { data, info } = await sharp(rgb, { raw: { width: from.width, height: from.height, channels: 3 } })
    .resize(to.width, to.height, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer({ resolveWithObject: true })
  if (info.channels !== 3) throw new Error(`expected 3 channels after resize, got ${info.channels}`)
  return new Uint8Array(data.buffer, data.byteOffset, data.length)
}

/** A bilinear enlargement by f spreads a 1–2 px edge over 1–2·f px; this brings it back to ~3. */
function steepen(alpha: Uint8Array, factor: number): void {
  if (factor <= SR_MIN_FACTOR) return
  const k = factor / SR_MIN_FACTOR
  const table = Uint8Array.from({ length: 256 }, (_, v) =>
    Math.min(255, Math.max(0, Math.round((v - 127.5) * k + 127.5))),
  )
  for (let i = 0; i < alpha.length; i++) alpha[i] = table[alpha[i]]
}

/** Whether the model should enlarge `subject` to `size`, and at which of its scales. */
export function superResolutionScale(subject: Size, size: Size, upscaler: Upscaler | null): number | null {
  const factor = Math.max(size.width / subject.width, size.height / subject.height)
  if (!upscaler || factor < SR_MIN_FACTOR) return null
  const scale = modelScaleFor(factor)
  return subject.width * subject.height * scale * scale <= SR_MAX_OUTPUT_PIXELS ? scale : null
}

/**
 * Scales a cutout to `size` (colours and alpha map the same rectangle).
 * @example const placed = await scaleSubject(subject, { width: 653, height: 870 }, upscaler)
 */
export async function scaleSubject(subject: Cutout, size: Size, upscaler: Upscaler | null): Promise<Scaled> {
  const factor = Math.max(size.width / subject.width, size.height / subject.height)
  const scale = superResolutionScale(subject, size, upscaler)
  let source: { rgb: Uint8Array } & Size = subject
  let superResolution: Scaled['superResolution']
  if (scale && upscaler) {
    const started = performance.now()
    const up = await upscaler.upscale(
      { data: subject.rgb, width: subject.width, height: subject.height, channels: 3 },
      scale,
    )
    superResolution = { scale, ms: performance.now() - started }
    source = { rgb: up.data, width: up.width, height: up.height }
  }
  const rgb = await lanczos(source.rgb, source, size)
  const alpha = resizeMask({ data: subject.alpha, ...subject }, size.width, size.height).data.slice()
  steepen(alpha, factor)
  return { rgb, alpha, ...size, superResolution }
}
