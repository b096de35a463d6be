/**
 * The mask confidence and its `low_confidence` warning (src/levels/confidence.ts, issue 31): the
 * measures on made masks, each level's rule (measure and threshold, chosen by the benchmark), and
 * through the server's `/v1/remove` with the stub segmenter (its mask ramps with the distance from
 * the border's colour), per level, a made photo whose subject fades into the background gets the
 * warning on its done frame and a plain one does not.
 */
import { describe, expect, it } from 'vitest'
import { LOW_CONFIDENCE_CODE } from '../../src/contract/frames.js'
import {
  CONFIDENCE_RULES,
  confidenceWarnings,
  LOW_CONFIDENCE,
  levelConfidence,
  maskConfidence,
  unsureShare,
} from '../src/levels/confidence.js'
import type { Segmenter } from '../src/segmentation/index.js'
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

  it(`warns below the threshold only (${LOW_CONFIDENCE}, balanced's, by default)`, () => {
    expect(confidenceWarnings(LOW_CONFIDENCE)).toEqual([])
    expect(confidenceWarnings(LOW_CONFIDENCE - 0.01)).toEqual([
      { code: LOW_CONFIDENCE_CODE, message: expect.stringContaining('check the result') },
    ])
    // It says how to fix it (issue 44 item 5): clicks as refinements of a project from the job, or the editor.
    expect(confidenceWarnings(0.5)[0].message).toMatch(
      /^The mask is uncertain \(confidence 0\.50\): check the result, and fix it with a few clicks: .*POST \/v1\/projects with \{"jobId"\}.*`points`.*\/editor\?job=/,
    )
    expect(confidenceWarnings(0.14, 0.15)).toHaveLength(1)
    expect(confidenceWarnings(0.15, 0.15)).toEqual([])
  })

  it("adds the level's doubt to the unsure share on a scale of 2, or counts the unsure band alone", () => {
    // 4 subject pixels, 2 unsure (as above): unsure share 0.5.
    const mask = Uint8Array.of(255, 255, 255, 200, 100, 0, 0, 0)
    expect(levelConfidence(mask, { finished: 2, departed: 4 }, 'unsure')).toBe(0.5)
    expect(levelConfidence(mask, { finished: 2, departed: 4 }, 'unsure+finished')).toBe(0.5) // 1 − (0.5 + 0.5) / 2
    expect(levelConfidence(mask, { finished: 2, departed: 4 }, 'unsure+departed')).toBe(0.25) // 1 − (0.5 + 1) / 2
    expect(levelConfidence(mask, {}, 'unsure+disputed')).toBe(0.75)
  })

  it("each level's rule is the benchmark's in-sample choice (docs/quality.md: Confidence)", () => {
    expect(CONFIDENCE_RULES).toEqual({
      fast: { measure: 'unsure+finished', threshold: 0.8 },
      balanced: { measure: 'unsure', threshold: 0.7 },
      high: { measure: 'unsure+departed', threshold: 0.15 },
    })
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

/**
 * The stub, except that a view below the native input sees faint contrast as subject (as a smaller
 * view of a soft subject often does): it is the stub's mask of the photo with every difference from
 * the grey background (200, madeSubject's) made ten times larger. On the faded disc `high`'s other
 * view then departs from `balanced` over the whole fading ring; on the plain square nowhere.
 */
function wideningStub(): Segmenter {
  const stub = createStubSegmenter()
  return {
    ...stub,
    async segment(image, size) {
      if (!size || (size.width === 1024 && size.height === 1024)) return stub.segment(image, size)
      const data = image.data.map((v) => Math.max(0, Math.min(255, 200 + 10 * (v - 200))))
      return stub.segment({ ...image, data }, size)
    },
  }
}

describe.each([
  ['fast', createStubSegmenter],
  ['high', wideningStub],
] as const)('low_confidence through /v1/remove on %s', (quality, segmenter) => {
  const KEY = 'confidence-level-key'
  const app = createApp({ signingKey: KEY, model: { current: segmenter() } })
  const options = { ...MASK_OPTIONS, quality }
  const threshold = CONFIDENCE_RULES[quality].threshold

  it('warns on the faded subject', async () => {
    const answer = await postJob(app, KEY, '/v1/remove', removeParts(await madeSubject('faded'), options))
    expect(answer.done?.confidence).toBeLessThan(threshold)
    expect(answer.done?.warnings).toEqual([{ code: LOW_CONFIDENCE_CODE, message: expect.any(String) }])
  })

  it('does not warn on the plain subject', async () => {
    const answer = await postJob(app, KEY, '/v1/remove', removeParts(await madeSubject('plain'), options))
    expect(answer.done?.confidence).toBeGreaterThanOrEqual(threshold)
    expect(answer.done?.warnings).toEqual([])
  })
})
