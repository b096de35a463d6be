/**
 * `POST /v1/try-on` with the real models (ISNet for the garment, BlazePose for the person): a
 * made T-shirt onto the astronaut, where the pixels changed, determinism, a photo without a
 * person, and refusals. One app for the file; requests are answered in-process.
 */
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TryOnLandmarks, TryOnRequest } from '../../src/contract/tryon.js'
import { LANDMARKS_OUTPUT, TRYON_WARNINGS } from '../../src/contract/tryon.js'
import { imagePart, optionsPart } from '../src/auth.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp } from '../src/server.js'
import { createCpuTryOn } from '../src/tryon/cpu.js'
import type { TryOnModel } from '../src/tryon/model.js'
import { makeTshirt } from './garments.js'
import { fixture, type JobAnswer, postJob, rawPng, type Target } from './helpers.js'
import { sharedModel } from './shared-model.js'

const KEY = 'tryon-test-key'
const PATH = '/v1/try-on'
const UPPER: TryOnRequest = { category: 'upper_body', seed: 7 }

const tryOnParts = (person: Uint8Array, garment: Uint8Array, options: unknown = UPPER) => [
  optionsPart(options),
  imagePart(person, 'person'),
  imagePart(garment, 'garment'),
]

describe('POST /v1/try-on with the CPU model', () => {
  let segmenter: Segmenter
  let model: TryOnModel
  let app: Target
  let shirt: Buffer
  let astronaut: Buffer
  let first: JobAnswer
  beforeAll(async () => {
    segmenter = (await sharedModel()).masks
    model = createCpuTryOn()
    await model.ready()
    app = createApp({ signingKey: KEY, model: { current: segmenter }, tryOn: model })
    shirt = await makeTshirt()
    astronaut = await fixture('astronaut.png')
    first = await postJob(app, KEY, PATH, tryOnParts(astronaut, shirt))
  })
  afterAll(async () => {
    await model?.close()
  })

  it('dresses the astronaut in the made shirt: a PNG at the photo size and the landmarks', async () => {
    expect(first.error).toBeUndefined()
    expect(first.stages).toEqual(['segmenting', 'rendering'])
    expect(first.outputs.map((o) => [o.name, o.contentType])).toEqual([
      ['result', 'image/png'],
      [LANDMARKS_OUTPUT, 'application/json'],
    ])
    const result = await rawPng(first.outputs[0].bytes)
    const photo = await sharp(astronaut).metadata()
    expect([result.width, result.height]).toEqual([photo.width, photo.height])
    expect([first.outputs[0].width, first.outputs[0].height]).toEqual([photo.width, photo.height])
  })

  it('changes pixels only in the region between the detected shoulders and hips', async () => {
    const landmarks = JSON.parse(new TextDecoder().decode(first.outputs[1].bytes)) as TryOnLandmarks
    const { points, region } = landmarks
    const shoulderY = Math.min(points.leftShoulder.y, points.rightShoulder.y)
    const hipY = Math.max(points.leftHip.y, points.rightHip.y)
    const torso = hipY - shoulderY
    expect(torso).toBeGreaterThan(50)
    const photo = await sharp(astronaut).removeAlpha().raw().toBuffer()
    const result = await rawPng(first.outputs[0].bytes)
    let changed = 0
    let outsideRegion = 0
    let outsideBand = 0
    for (let y = 0; y < result.height; y++) {
      for (let x = 0; x < result.width; x++) {
        const i = (y * result.width + x) * 3
        if (photo[i] === result.data[i] && photo[i + 1] === result.data[i + 1] && photo[i + 2] === result.data[i + 2])
          continue
        changed++
        if (x < region[0] || x >= region[2] || y < region[1] || y >= region[3]) outsideRegion++
        // The shirt's shoulder seams sit above the joints, its hem at the hips.
        if (y < shoulderY - 0.25 * torso || y > hipY + 0.1 * torso) outsideBand++
      }
    }
    expect(changed).toBeGreaterThan(0.1 * result.width * result.height)
    expect(outsideRegion).toBe(0)
    expect(outsideBand / changed).toBeLessThan(0.02)
  })

  it('marks every result experimental and non-commercial', () => {
    expect(first.done?.warnings.map((w) => w.code)).toContain(TRYON_WARNINGS.experimental)
    expect(first.done?.modelVersion).toMatch(/^tryon-cpu@1\+blazepose-full@3\.0\.4\+isnet/)
  })

  it('answers the same bytes for the same inputs and seed', async () => {
    const again = await postJob(app, KEY, PATH, tryOnParts(astronaut, shirt))
    expect(Buffer.from(again.outputs[0].bytes).equals(Buffer.from(first.outputs[0].bytes))).toBe(true)
    expect(again.outputs[1].bytes).toEqual(first.outputs[1].bytes)
  })

  it('fails with invalid_input naming the person image when the photo holds no person', async () => {
    const answer = await postJob(app, KEY, PATH, tryOnParts(await fixture('coffee.png'), shirt))
    expect(answer.status).toBe(200)
    expect(answer.outputs).toEqual([])
    expect(answer.error?.code).toBe('invalid_input')
    expect(answer.error?.message).toMatch(/^person: .*person image/)
    expect(answer.error?.message).toContain(TRYON_WARNINGS.noPose)
  })

  it('refuses an extra part and bad options before any work', async () => {
    const extra = await postJob(app, KEY, PATH, [...tryOnParts(astronaut, shirt), imagePart(shirt, 'mask')])
    expect(extra.status).toBe(400)
    expect(extra.json).toMatchObject({ code: 'invalid_input' })
    const noSeed = await postJob(app, KEY, PATH, tryOnParts(astronaut, shirt, { category: 'upper_body' }))
    expect(noSeed.status).toBe(400)
    const missing = await postJob(app, KEY, PATH, [optionsPart(UPPER), imagePart(astronaut, 'person')])
    expect(missing.status).toBe(400)
    expect(missing.json).toMatchObject({ code: 'invalid_input', message: 'Expected a part named garment' })
  })
})
