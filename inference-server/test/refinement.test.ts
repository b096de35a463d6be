/**
 * `POST /v1/refine` through the HTTP app with the real model and real sharp: the base mask comes
 * from `/v1/remove` on a fixture photo, as a project's first revision does.
 */
import sharp from 'sharp'
import { beforeAll, describe, expect, it } from 'vitest'
import type { RefineRequest } from '../../src/contract/editing.js'
import { imagePart, optionsPart, type RequestPart } from '../src/auth.js'
import { refinementRegion, toPixel } from '../src/refinement/region.js'
import { createApp } from '../src/server.js'
import { fixture, type JobAnswer, postJob, rawPng, removeParts, type Target, STUB_INPUT } from './helpers.js'
import { sharedModel } from './shared-model.js'

const KEY = 'refinement-test-key'
const REFINE = '/v1/refine'
const MODEL_VERSION = 'isnet-general@1.4.5+fp16'

const refineParts = (options: unknown, image: Uint8Array, mask: Uint8Array): RequestPart[] => [
  optionsPart(options),
  imagePart(image),
  imagePart(mask, 'mask'),
]

/** The one output of a refinement answer, decoded, after checking the frames around it. */
async function refinedMask(answer: JobAnswer, stages = ['segmenting', 'refining']) {
  expect(answer.error).toBeUndefined()
  expect(answer.status).toBe(200)
  expect(answer.frames.map((f) => f.type)).toEqual([...stages.map(() => 'stage'), 'output', 'done'])
  expect(answer.stages).toEqual(stages)
  const [output] = answer.outputs
  expect(output).toMatchObject({ name: 'mask', contentType: 'image/png' })
  expect(answer.done).toMatchObject({ type: 'done', modelVersion: MODEL_VERSION, warnings: [] })
  return { output, png: await rawPng(output.bytes) }
}

describe('POST /v1/refine with the real model', () => {
  let target: Target
  let photo: Buffer
  let base: Uint8Array
  let basePixels: Buffer

  beforeAll(async () => {
    // The fork's model remembering its masks (shared-model.ts): the base removal's run is often
    // another file's already, and a refinement asked twice runs its close-up once.
    const app = createApp({ signingKey: KEY, model: { current: (await sharedModel()).masks } })
    target = { request: (path, init) => app.request(path, init) }
    photo = await fixture('astronaut.png')
    const removal = await postJob(target, KEY, '/v1/remove', removeParts(photo))
    base = removal.outputs[0].bytes
    basePixels = (await rawPng(base)).data
  })
  /** Pixels that differ from the base: all of them must lie inside `region`. */
  const changes = (refined: Buffer, width: number) => {
    const out: { x: number; y: number }[] = []
    for (let i = 0; i < refined.length; i++)
      if (refined[i] !== basePixels[i]) out.push({ x: i % width, y: (i / width) | 0 })
    return out
  }

  it('refines inside a box: a source-size grey mask equal to the base outside the box', async () => {
    const request: RefineRequest = { box: { x: 0.25, y: 0.1, width: 0.5, height: 0.45 } }
    const answer = await postJob(target, KEY, REFINE, refineParts(request, photo, base))
    const { output, png } = await refinedMask(answer)
    expect(output).toMatchObject({ width: 512, height: 512 })
    expect(png).toMatchObject({ width: 512, height: 512, channels: 1 })
    expect(answer.done?.timings).toEqual({
      decode: expect.any(Number),
      segment: expect.any(Number),
      refine: expect.any(Number),
      encode: expect.any(Number),
    })
    const region = refinementRegion(request, 512, 512)
    expect(region).toEqual({ x0: 128, y0: 51, x1: 384, y1: 282 })
    const changed = changes(png.data, 512)
    // The zoomed look changes something (the head and shoulders at twice the model's resolution)…
    expect(changed.length).toBeGreaterThan(100)
    // …and nothing outside the box.
    const outside = changed.filter((p) => p.x < region.x0 || p.x >= region.x1 || p.y < region.y0 || p.y >= region.y1)
    expect(outside).toEqual([])
  })

  // Clicks (points without a box) run no model: they decide the subject from the base and every point.
  const CLICK_STAGES = ['refining']

  it('clicks: each point ends on its side, an earlier point still holds, and the model does not run', async () => {
    // The flag (top left) is background in the base, the suit's chest foreground: both points
    // contradict the base, so the refinement must move them; the flag's point comes as an earlier
    // click, which must hold although the request's own point is elsewhere.
    const flag = { x: 0.06, y: 0.2, label: 'foreground' } as const
    const chest = { x: 0.4, y: 0.75, label: 'background' } as const
    const fg = toPixel(flag, 512, 512)
    const bg = toPixel(chest, 512, 512)
    expect(basePixels[fg.y * 512 + fg.x]).toBeLessThan(128)
    expect(basePixels[bg.y * 512 + bg.x]).toBeGreaterThanOrEqual(128)
    const request: RefineRequest = { points: [chest], earlierPoints: [flag] }
    const answer = await postJob(target, KEY, REFINE, refineParts(request, photo, base))
    const { png } = await refinedMask(answer, CLICK_STAGES)
    expect(png.data[fg.y * 512 + fg.x]).toBeGreaterThanOrEqual(128)
    expect(png.data[bg.y * 512 + bg.x]).toBeLessThanOrEqual(127)
    expect(answer.done?.timings).toMatchObject({ segment: 0 })
  })

  it('a click changes the part of the photo it lands on and leaves far parts alone', async () => {
    const flag = { x: 0.06, y: 0.2, label: 'foreground' } as const
    const { png } = await refinedMask(
      await postJob(target, KEY, REFINE, refineParts({ points: [flag] }, photo, base)),
      CLICK_STAGES,
    )
    const raised = changes(png.data, 512).filter((p) => png.data[p.y * 512 + p.x] >= 128)
    // More than the click’s own pixels (the part of the flag it is joined to by colour; the drawn
    // scenes of click-refinement.test.ts show a whole part filled)…
    expect(raised.length).toBeGreaterThan(100)
    // …and nothing in the photo's right half, which the click is not joined to.
    expect(raised.filter((p) => p.x >= 256)).toEqual([])
  })

  it('answers the same bytes for the same request', async () => {
    // The second answer's close-up mask is the first's remembered run (shared-model.ts): this holds
    // what the refinement does around the model; that the model itself gives the same output run
    // after run is reference.test.ts's and sessions.test.ts's to show.
    const request: RefineRequest = {
      box: { x: 0.1, y: 0.5, width: 0.6, height: 0.5 },
      points: [
        { x: 0.3, y: 0.7, label: 'foreground' },
        { x: 0.05, y: 0.9, label: 'background' },
      ],
    }
    const first = await postJob(target, KEY, REFINE, refineParts(request, photo, base))
    const second = await postJob(target, KEY, REFINE, refineParts(request, photo, base))
    const [a, b] = [first.outputs[0]?.bytes, second.outputs[0]?.bytes]
    expect(a?.byteLength).toBeGreaterThan(0)
    expect(Buffer.from(b).equals(Buffer.from(a))).toBe(true)
  })

  it('refuses bad options with 400 invalid_input before the work starts', async () => {
    const cases: [unknown, string][] = [
      [{}, 'Expected points, a box, or both'],
      [{ box: { x: 0.8, y: 0, width: 0.5, height: 0.5 } }, 'Expected the box to lie inside the image'],
      [{ box: { x: 1.2, y: 0, width: 0.1, height: 0.1 } }, 'for box.x'],
      [{ points: [] }, 'for points'],
      [{ points: [{ x: 0.5, y: 0.5, label: 'maybe' }] }, 'for points.0.label'],
      [{ box: { x: 0, y: 0, width: 1, height: 1 }, extra: 1 }, 'options are strict'],
    ]
    for (const [options, message] of cases) {
      const answer = await postJob(target, KEY, REFINE, refineParts(options, photo, base))
      expect(answer.status, JSON.stringify(options)).toBe(400)
      expect(answer.json).toMatchObject({ code: 'invalid_input', retryable: false })
      expect((answer.json as { message: string }).message).toContain(message)
    }
    const noMask = await postJob(target, KEY, REFINE, [
      optionsPart({ box: { x: 0, y: 0, width: 1, height: 1 } }),
      imagePart(photo),
    ])
    expect(noMask.status).toBe(400)
    expect(noMask.json).toMatchObject({ code: 'invalid_input', message: 'Expected a part named mask' })
  })

  it('fails the job with invalid_input when the mask is not at the source size', async () => {
    const wrongSize = await sharp(base).resize(256, 256).toColourspace('b-w').png().toBuffer()
    const answer = await postJob(
      target,
      KEY,
      REFINE,
      refineParts({ box: { x: 0, y: 0, width: 1, height: 1 } }, photo, wrongSize),
    )
    expect(answer.error).toMatchObject({
      code: 'invalid_input',
      message: "Expected the mask at the image's size 512×512 but received 256×256",
    })
  })
})

describe('POST /v1/refine body limit', () => {
  it('takes a photo at the upload limit plus its mask (101 MiB), where /v1/remove stops at 51 MiB', async () => {
    const stub = {
      version: 'stub@1',
      input: STUB_INPUT,
      segment: async () => Promise.reject(new Error('unused')),
      close: async () => {},
    }
    const app = createApp({ signingKey: KEY, model: { current: stub } })
    // The limit is read from Content-Length before the body: a short body with a large header is enough.
    const post = (path: string, mib: number) =>
      app.request(path, { method: 'POST', headers: { 'content-length': String(mib * 1024 * 1024) }, body: 'x' })
    expect((await post('/v1/remove', 60)).status).toBe(413)
    // Past the limit check, the unsigned request is refused by its signature instead.
    expect((await post(REFINE, 60)).status).toBe(401)
    const tooLarge = await post(REFINE, 102)
    expect(tooLarge.status).toBe(413)
    expect(await tooLarge.json()).toMatchObject({ code: 'image_too_large' })
  })
})
