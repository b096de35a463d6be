/**
 * INFERENCE_SESSIONS: a pool of model threads (segmentation/index.ts). Two 1-thread sessions take
 * two images at once and give the masks one session gives (the throughput comparison is in
 * bench/throughput.ts, never here).
 */
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../src/imaging/decode.js'
import { createSegmenter } from '../src/segmentation/index.js'
import { fixture } from './helpers.js'

describe('a pool of two sessions', () => {
  it('runs two images at once, each with the same mask as the other session gives', async () => {
    const pool = await createSegmenter({ sessions: 2, threads: 1 })
    try {
      const { image: astronaut } = await decodeImage(await fixture('astronaut.png'))
      const { image: coffee } = await decodeImage(await fixture('coffee.png'))
      // Four runs, two at a time: each image goes through both sessions. At a small input (the
      // graph takes any size): what is tested is that two sessions run side by side and agree,
      // which holds at any size, and four single-threaded runs at 1024² took two minutes.
      const size = { width: 320, height: 320 }
      const [a1, c1] = await Promise.all([pool.segment(astronaut, size), pool.segment(coffee, size)])
      const [c2, a2] = await Promise.all([pool.segment(coffee, size), pool.segment(astronaut, size)])
      expect(a1.data).toEqual(a2.data)
      expect(c1.data).toEqual(c2.data)
      expect(a1.data).not.toEqual(c1.data.subarray(0, a1.data.length))
    } finally {
      await pool.close()
    }
  })
})
