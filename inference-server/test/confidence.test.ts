/**
 * The mask confidence and its `low_confidence` warning (src/levels/confidence.ts, issue 31): the
 * measure on made masks, and through the server's `/v1/remove` with the stub segmenter (its mask
 * ramps with the distance from the border's colour), a made photo whose subject fades into the
 * background gets the warning on its done frame and a plain one does not.
 */
import { describe, expect, it } from 'vitest'
import { LOW_CONFIDENCE_CODE } from '../../src/contract/frames.js'
import { confidenceWarnings, LOW_CONFIDENCE, maskConfidence, unsureShare } from '../src/levels/confidence.js'
import { createStubSegmenter } from '../src/segmentation/stub.js'
import { createApp } from '../src/server.js'
import { MASK_OPTIONS, postJob, removeParts } from './helpers.js'
import { madeSubject } from './made-subjects.js'

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
  const madePhoto = madeSubject

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
