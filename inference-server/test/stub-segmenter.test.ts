/**
 * The test-only stub segmenter (INFERENCE_SEGMENTER=stub) the Worker's bookkeeping tests run
 * behind: chosen only when asked for, refused when misspelt, deterministic, and honest about
 * being a stub in the version it reports. No model run.
 */
import { describe, expect, it } from 'vitest'
import type { RgbImage } from '../src/imaging/types.js'
import {
  createStubSegmenter,
  STUB_SEGMENTER_VERSION,
  segmenterKindFromEnv,
  stubDelayFromEnv,
} from '../src/segmentation/stub.js'

/** A 16×16 white image with a black 8×8 square in its middle. */
function squareOnWhite(): RgbImage {
  const width = 16
  const height = 16
  const data = new Uint8Array(width * height * 3).fill(255)
  for (let y = 4; y < 12; y++) for (let x = 4; x < 12; x++) data.fill(0, (y * width + x) * 3, (y * width + x) * 3 + 3)
  return { data, width, height, channels: 3 }
}

describe('INFERENCE_SEGMENTER', () => {
  it('is the real model unless the stub is asked for by name', () => {
    expect(segmenterKindFromEnv({})).toBe('model')
    expect(segmenterKindFromEnv({ INFERENCE_SEGMENTER: '' })).toBe('model')
    expect(segmenterKindFromEnv({ INFERENCE_SEGMENTER: 'model' })).toBe('model')
    expect(segmenterKindFromEnv({ INFERENCE_SEGMENTER: 'stub' })).toBe('stub')
  })

  it('stops the start for any other value, naming the choices', () => {
    expect(() => segmenterKindFromEnv({ INFERENCE_SEGMENTER: 'Stub' })).toThrow(
      'Expected INFERENCE_SEGMENTER to be one of model, stub but received Stub',
    )
  })

  it('INFERENCE_STUB_DELAY_MS is a non-negative integer, 0 by default', () => {
    expect(stubDelayFromEnv({})).toBe(0)
    expect(stubDelayFromEnv({ INFERENCE_STUB_DELAY_MS: '200' })).toBe(200)
    for (const bad of ['-1', '1.5', 'soon'])
      expect(() => stubDelayFromEnv({ INFERENCE_STUB_DELAY_MS: bad })).toThrow(/INFERENCE_STUB_DELAY_MS/)
  })
})

describe('the stub segmenter', () => {
  it('masks what differs from the border, the same way every time, at the image size', async () => {
    const segmenter = createStubSegmenter()
    const image = squareOnWhite()
    const mask = await segmenter.segment(image)
    expect(mask).toMatchObject({ width: 16, height: 16 })
    expect(mask.data[0], 'a corner').toBe(0)
    expect(mask.data[8 * 16 + 8], 'the square').toBe(255)
    expect(mask.data.filter((v) => v === 255).length, 'the whole square, nothing else').toBe(64)
    expect((await segmenter.segment(image)).data).toEqual(mask.data)
  })

  it('reports a version no model has, so its results cannot pass for the model', () => {
    expect(createStubSegmenter().version).toBe(STUB_SEGMENTER_VERSION)
    expect(STUB_SEGMENTER_VERSION).not.toMatch(/^isnet/)
  })

  it('takes its configured time per run', async () => {
    const started = performance.now()
    await createStubSegmenter({ delayMs: 50 }).segment(squareOnWhite())
    expect(performance.now() - started).toBeGreaterThanOrEqual(45)
  })
})
