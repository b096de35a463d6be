/**
 * A test-only segmenter: `INFERENCE_SEGMENTER=stub` (never the default) makes masks without ONNX,
 * in microseconds, so the Worker's bookkeeping tests (credits, batches, saturation, webhooks,
 * retention, idempotency…) exercise the same HTTP server, limiter and protocol as production
 * without paying for a model run each. Tests that assert what the model sees (reference masks,
 * levels, formats, e2e) use the real model.
 *
 * The mask is deterministic: a pixel's distance from the mean colour of the image's border,
 * ramped to 0–255. A subject on a plain background comes out as foreground, and the same image
 * always gives the same mask.
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { Segmenter } from './index.js'

/** Reported as `X-Model-Version`, so a result made by the stub can never pass for a model's. */
export const STUB_SEGMENTER_VERSION = 'stub-segmenter@1'

/** The values `INFERENCE_SEGMENTER` takes; unset means the real model. */
export const SEGMENTER_KINDS = ['model', 'stub'] as const
export type SegmenterKind = (typeof SEGMENTER_KINDS)[number]

/**
 * Reads `INFERENCE_SEGMENTER`: unset or `model` is the real model, `stub` this module.
 * @throws {Error} for any other value, so a typo cannot silently pick one or the other
 */
export function segmenterKindFromEnv(env: Record<string, string | undefined>): SegmenterKind {
  const raw = env.INFERENCE_SEGMENTER
  if (raw === undefined || raw === '') return 'model'
  if ((SEGMENTER_KINDS as readonly string[]).includes(raw)) return raw as SegmenterKind
  throw new Error(`Expected INFERENCE_SEGMENTER to be one of ${SEGMENTER_KINDS.join(', ')} but received ${raw}`)
}

/** Mean RGB of the outermost rows and columns. */
function borderColour({ data, width, height }: RgbImage): [number, number, number] {
  const sum = [0, 0, 0]
  let count = 0
  const add = (x: number, y: number) => {
    const i = (y * width + x) * 3
    sum[0] += data[i]
    sum[1] += data[i + 1]
    sum[2] += data[i + 2]
    count++
  }
  for (let x = 0; x < width; x++) {
    add(x, 0)
    add(x, height - 1)
  }
  for (let y = 1; y < height - 1; y++) {
    add(0, y)
    add(width - 1, y)
  }
  return [sum[0] / count, sum[1] / count, sum[2] / count]
}

/** Distance below which a pixel is background, and the ramp over which it becomes foreground. */
const FLOOR = 24
const RAMP = 48

/** The stub's mask of `image`: see the module comment. */
export function stubMask(image: RgbImage): Mask {
  const { data, width, height } = image
  const [r, g, b] = borderColour(image)
  const mask = new Uint8Array(width * height)
  for (let p = 0, i = 0; p < mask.length; p++, i += 3) {
    const distance = Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b)
    mask[p] = Math.max(0, Math.min(255, Math.round(((distance - FLOOR) * 255) / RAMP)))
  }
  return { data: mask, width, height }
}

/**
 * Reads `INFERENCE_STUB_DELAY_MS` (default 0): how long each stub run takes, so a test can keep
 * the server busy long enough to see it saturated without paying for the model.
 * @throws {Error} for anything but a non-negative integer
 */
export function stubDelayFromEnv(env: Record<string, string | undefined>): number {
  const raw = env.INFERENCE_STUB_DELAY_MS
  if (raw === undefined || raw === '') return 0
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`Expected integer of at least 0 for INFERENCE_STUB_DELAY_MS but received ${raw}`)
  }
  return value
}

/**
 * The stub as a `Segmenter`, each run taking `delayMs`; it takes any input size, like the
 * size-agnostic model.
 * @example const segmenter = createStubSegmenter({ delayMs: 200 })
 */
export function createStubSegmenter({ delayMs = 0 }: { delayMs?: number } = {}): Segmenter {
  return {
    version: STUB_SEGMENTER_VERSION,
    input: { kind: 'any', native: { width: 1024, height: 1024 }, multiple: 64 },
    async segment(image) {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs))
      return stubMask(image)
    },
    close: async () => undefined,
  }
}
