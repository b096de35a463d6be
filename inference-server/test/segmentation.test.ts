import sharp from 'sharp'
import { beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../src/imaging/decode.js'
import { removeBackground } from '../src/remove.js'
import { uncertainBand, widen } from '../src/levels/edge-tiles.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { toInputTensor } from '../src/segmentation/preprocess.js'
import { fixture, meanAbsDiff, rawPng } from './helpers.js'
import { sharedModel } from './shared-model.js'

// The fork's one real model (shared-model.ts): it takes seconds to load and about 1 GB. `masks` is the
// same model remembering its masks (remembered-masks.ts): a balanced mask that a later test compares
// with is the one an earlier request already made, not a second run of the model.
let segmenter: Segmenter
let masks: Segmenter
beforeAll(async () => {
  ;({ model: segmenter, masks } = await sharedModel())
})

describe('toInputTensor', () => {
  it('builds a [3, 1024, 1024] tensor of (v − 128) / 256 from a stretched image', () => {
    const data = new Uint8Array(40 * 32 * 3).fill(0)
    for (let i = 0; i < data.length; i += 3) data[i] = 255 // pure red
    const tensor = toInputTensor({ data, width: 40, height: 32, channels: 3 })
    const plane = 1024 * 1024
    expect(tensor.length).toBe(3 * plane)
    expect(tensor[0]).toBeCloseTo((255 - 128) / 256)
    expect(tensor[plane + 5000]).toBeCloseTo(-0.5)
    expect(tensor[2 * plane + plane - 1]).toBeCloseTo(-0.5)
  })
})

describe('ISNet segmentation', () => {
  it('reports its version', () => {
    expect(segmenter.version).toBe('isnet-general@1.4.5+fp16')
  })

  it('cuts the astronaut out: opaque on the face, transparent in the top-left corner', async () => {
    const bytes = await fixture('astronaut.png')
    const started = performance.now()
    const stages: string[] = []
    const { png, width, height, timings, warnings } = await removeBackground(
      masks,
      bytes,
      { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' },
      (stage) => stages.push(stage),
    )
    console.log(`astronaut cutout in ${(performance.now() - started).toFixed(0)} ms`, timings)
    expect(stages).toEqual(['segmenting', 'refining', 'rendering'])
    expect(warnings).toEqual([])
    expect([width, height]).toEqual([512, 512])
    const cutout = await rawPng(png)
    expect(cutout).toMatchObject({ width: 512, height: 512, channels: 4 })
    const alphaAt = (x: number, y: number) => cutout.data[(y * 512 + x) * 4 + 3]
    expect(alphaAt(255, 150)).toBeGreaterThanOrEqual(250) // face
    expect(alphaAt(230, 190)).toBeGreaterThanOrEqual(250) // chin
    expect(alphaAt(5, 5)).toBeLessThanOrEqual(5) // background, top left
    expect(alphaAt(30, 60)).toBeLessThanOrEqual(5) // background (flag side)
    // A certain pixel (alpha 255) keeps the source colour: decontamination touches only the edge band.
    const { image } = await decodeImage(bytes)
    expect(Array.from(cutout.data.subarray((150 * 512 + 255) * 4, (150 * 512 + 255) * 4 + 3))).toEqual(
      Array.from(image.data.subarray((150 * 512 + 255) * 3, (150 * 512 + 255) * 3 + 3)),
    )
  })

  it('returns an 8-bit 1-channel mask at source size, hard for binary alpha', async () => {
    const bytes = await fixture('rocket.jpg')
    const { image } = await decodeImage(bytes)
    const { png } = await removeBackground(segmenter, bytes, {
      quality: 'fast',
      alpha: { mode: 'binary', threshold: 0.5, feather: 0 },
      output: 'mask',
    })
    const mask = await rawPng(png)
    expect(mask).toMatchObject({ width: image.width, height: image.height, channels: 1 })
    expect(new Set(mask.data)).toEqual(new Set([0, 255]))
  })

  it('feathers a binary mask into a few intermediate values at the edge', async () => {
    const bytes = await fixture('small.heic')
    const { png } = await removeBackground(segmenter, bytes, {
      quality: 'high',
      alpha: { mode: 'binary', threshold: 0.5, feather: 3 },
      output: 'mask',
    })
    const mask = await rawPng(png)
    expect(mask).toMatchObject({ width: 512, height: 512, channels: 1 })
    const soft = mask.data.filter((v) => v > 0 && v < 255).length
    expect(soft).toBeGreaterThan(500)
    expect(soft).toBeLessThan(512 * 512 * 0.2)
  })

  it('fast runs the model once at a smaller input: a different mask, the subject still found', async () => {
    // Its quality is judged against real ground truth (bench/quality-gt.ts, issue 22), no longer by
    // IoU against balanced (0.83 here at 640²: bench/results/levels-sweep.json).
    const bytes = await fixture('astronaut.png')
    const options = { alpha: { mode: 'raw', feather: 0 }, output: 'mask' } as const
    const balanced = await rawPng((await removeBackground(masks, bytes, { ...options, quality: 'balanced' })).png)
    const fast = await removeBackground(segmenter, bytes, { ...options, quality: 'fast' })
    expect(fast.modelRuns).toBe(1)
    const mask = await rawPng(fast.png)
    expect(mask).toMatchObject({ width: 512, height: 512, channels: 1 })
    expect(meanAbsDiff(mask.data, balanced.data)).toBeGreaterThan(0)
    expect(mask.data[150 * 512 + 255]).toBeGreaterThanOrEqual(250) // face
    expect(mask.data[5 * 512 + 5]).toBeLessThanOrEqual(5) // background, top left
  })

  it('high looks again at the edge of a large image and leaves the rest as balanced', async () => {
    // 2048² (4× the astronaut's pixels): the model mask is upscaled 2×, so the close-ups apply.
    const bytes = await sharp(await fixture('astronaut.png'))
      .resize(2048, 2048, { kernel: 'lanczos3' })
      .png({ compressionLevel: 1 })
      .toBuffer()
    const options = { alpha: { mode: 'raw', feather: 0 }, output: 'mask' } as const
    const balanced = await rawPng((await removeBackground(masks, bytes, { ...options, quality: 'balanced' })).png)
    const started = performance.now()
    // high's first look is balanced's mask (remembered); its other views and close-ups run the model.
    const high = await removeBackground(masks, bytes, { ...options, quality: 'high' })
    console.log(
      `2048² high in ${(performance.now() - started).toFixed(0)} ms, ${high.modelRuns} model runs`,
      high.timings,
    )
    expect(high.modelRuns).toBeGreaterThan(1)
    const refined = await rawPng(high.png)
    expect(refined).toMatchObject({ width: 2048, height: 2048, channels: 1 })
    // Far from balanced's uncertain band (64 px: well past the band's margin and the guided
    // filter's window) nothing changes.
    const near = widen(uncertainBand({ ...balanced, width: 2048, height: 2048 }, 0, 255), 2048, 2048, 64)
    let changed = 0
    let farChanged = 0
    for (let i = 0; i < refined.data.length; i++) {
      if (refined.data[i] !== balanced.data[i]) near[i] ? changed++ : farChanged++
    }
    expect(farChanged).toBe(0)
    expect(changed).toBeGreaterThan(1000)
    expect(meanAbsDiff(refined.data, balanced.data)).toBeLessThan(3)
  }, 900_000) // ~10 model runs: minutes on the wasm runtime (INFERENCE_RUNTIME=web) of a shared 2-core box
})
