/**
 * The mask confidence and its `low_confidence` warning (src/levels/confidence.ts, issue 31): the
 * measure on made masks, and through the server's `/v1/remove` with the stub segmenter (its mask
 * ramps with the distance from the border's colour), a made photo whose subject fades into the
 * background gets the warning on its done frame and a plain one does not.
 */
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { LOW_CONFIDENCE_CODE } from '../../src/contract/frames.js'
import { confidenceWarnings, LOW_CONFIDENCE, maskConfidence, unsureShare } from '../src/levels/confidence.js'
import { createStubSegmenter } from '../src/segmentation/stub.js'
import { createApp } from '../src/server.js'
import { MASK_OPTIONS, postJob, removeParts } from './helpers.js'

describe('mask confidence', () => {
  it('is 1 for a mask that is all sure, 0 for an empty one', () => {
    expect(maskConfidence(Uint8Array.of(255, 255, 0, 0))).toBe(1)
    expect(maskConfidence(new Uint8Array(4))).toBe(0)
  })

  it('falls with the unsure share of the subject (25 < v < 230), and with the disputed share', () => {
    // 4 subject pixels (≥ 128), 1 of them unsure, and 1 unsure pixel outside it: 2 / 4.
    const mask = Uint8Array.of(255, 255, 255, 200, 100, 0, 0, 0)
    expect(unsureShare(mask)).toBe(0.5)
    expect(maskConfidence(mask)).toBe(0.5)
    expect(maskConfidence(mask, 1)).toBe(0.25)
    expect(maskConfidence(mask, 10)).toBe(0)
    expect(maskConfidence(Uint8Array.of(255, 255, 255, 230, 25, 0))).toBe(1)
  })

  it(`warns below ${LOW_CONFIDENCE} only`, () => {
    expect(confidenceWarnings(LOW_CONFIDENCE)).toEqual([])
    expect(confidenceWarnings(LOW_CONFIDENCE - 0.01)).toEqual([
      { code: LOW_CONFIDENCE_CODE, message: expect.stringContaining('check the result') },
    ])
  })
})

describe('low_confidence through /v1/remove', () => {
  const KEY = 'confidence-test-key'
  const app = createApp({ signingKey: KEY, model: { current: createStubSegmenter() } })
  const S = 256

  /** A grey photo with a subject: a crisp dark square, or a dark disc that fades out over its radius. */
  async function madePhoto(kind: 'plain' | 'faded'): Promise<Buffer> {
    const data = Buffer.alloc(S * S * 3, 200)
    for (let y = 0; y < S; y++)
      for (let x = 0; x < S; x++) {
        const d = Math.hypot(x - S / 2, y - S / 2) / (S / 3)
        const dark =
          kind === 'plain' ? (Math.abs(x - S / 2) < S / 4 && Math.abs(y - S / 2) < S / 4 ? 1 : 0) : Math.max(0, 1 - d)
        // The plain square is far from the background; the faded disc stays within the stub's ramp.
        data.fill(Math.round(200 - (kind === 'plain' ? 160 : 40) * dark), (y * S + x) * 3, (y * S + x) * 3 + 3)
      }
    return sharp(data, { raw: { width: S, height: S, channels: 3 } })
      .png()
      .toBuffer()
  }

  it('carries the warning and a low confidence for a subject that fades into the background', async () => {
    const answer = await postJob(app, KEY, '/v1/remove', removeParts(await madePhoto('faded'), MASK_OPTIONS))
    expect(answer.done?.confidence).toBeLessThan(LOW_CONFIDENCE)
    expect(answer.done?.warnings).toEqual([{ code: LOW_CONFIDENCE_CODE, message: expect.any(String) }])
  })

  it('carries neither for a plain subject with crisp edges', async () => {
    const answer = await postJob(app, KEY, '/v1/remove', removeParts(await madePhoto('plain'), MASK_OPTIONS))
    expect(answer.done?.confidence).toBe(1)
    expect(answer.done?.warnings).toEqual([])
  })
})
