import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { FRAMES_CONTENT_TYPE, readFrames } from '../../src/contract/frames.js'
import { imagePart, optionsPart, signedRequest } from '../src/auth.js'
import { Limiter } from '../src/limiter.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp, startServer, type RunningServer } from '../src/server.js'
import {
  collectFrames,
  fixture,
  type JobAnswer,
  MASK_OPTIONS,
  postJob,
  postParts,
  rawPng,
  removeParts,
  send,
  type Target,
  waitFor,
  STUB_INPUT,
} from './helpers.js'
import { sharedModel } from './shared-model.js'

const KEY = 'server-test-key'
const REMOVE = '/v1/remove'
const INSPECT = '/v1/inspect'
const MODEL_VERSION = 'isnet-general@1.4.5+fp16'

/** A segmenter that answers a flat, sure mask at once: for HTTP behaviour without the model. */
const stubSegmenter = (): Segmenter => ({
  version: 'stub@1',
  input: STUB_INPUT,
  async segment(image) {
    return { data: new Uint8Array(image.width * image.height).fill(255), width: image.width, height: image.height }
  },
  async close() {},
})

/**
 * A stub segmenter whose every run waits until the test lets it finish (`finishNext`, in order):
 * for queueing and saturation without sleeping through a fixed delay.
 */
function heldSegmenter() {
  const held: (() => void)[] = []
  const segmenter: Segmenter = {
    version: 'stub@1',
    input: STUB_INPUT,
    async segment(image) {
      await new Promise<void>((finish) => held.push(finish))
      return { data: new Uint8Array(image.width * image.height).fill(200), width: image.width, height: image.height }
    },
    async close() {},
  }
  const finishNext = async () => {
    await waitFor(() => held.length > 0, 'a run to reach the segmenter')
    held.shift()?.()
  }
  return { segmenter, finishNext }
}

/** A stub server on an ephemeral port, closed by `close()`. */
async function stubServer(segmenter: Segmenter, limiter?: Limiter): Promise<RunningServer> {
  return startServer(createApp({ signingKey: KEY, model: { current: segmenter }, limiter }), { port: 0 })
}

const readiness = async (base: string) => (await fetch(`${base}/health/ready`)).json() as Promise<{ running: number }>

const jsonMessage = async (res: Response) => ((await res.json()) as { message: string }).message

describe('HTTP server with the real model, end to end on 127.0.0.1', () => {
  let segmenter: Segmenter
  let server: RunningServer
  beforeAll(async () => {
    // The fork's model (shared-model.ts), running on every call: these tests need a run in flight.
    segmenter = (await sharedModel()).model
    server = await startServer(createApp({ signingKey: KEY, model: { current: segmenter } }), {
      port: 0,
      host: '127.0.0.1',
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  it('answers the health routes unsigned', async () => {
    expect(await (await fetch(`${server.url}/health/live`)).json()).toEqual({ status: 'ok' })
    const ready = await fetch(`${server.url}/health/ready`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({
      status: 'ready',
      modelVersion: MODEL_VERSION,
      running: 0,
      queued: 0,
      concurrency: 1,
      queueLimit: 8,
      dropped: 0,
      stopped: 0,
    })
  })

  it('inspects an image (one part, a JSON answer)', async () => {
    const res = await postParts(server.url, KEY, INSPECT, [imagePart(await fixture('small.webp'))])
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await res.json()).toEqual({ width: 512, height: 512, mimeType: 'image/webp' })
  })

  it('streams the stages, a 1-channel mask PNG and done', async () => {
    const started = performance.now()
    const answer = await postJob(server.url, KEY, REMOVE, removeParts(await fixture('astronaut.png')))
    console.log(
      `astronaut mask over HTTP in ${(performance.now() - started).toFixed(0)} ms; timings ${JSON.stringify(answer.done?.timings)}`,
    )
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe(FRAMES_CONTENT_TYPE)
    expect(answer.headers.get('x-model-version')).toBe(MODEL_VERSION)
    expect(answer.frames.map((f) => f.type)).toEqual(['stage', 'stage', 'stage', 'output', 'done'])
    expect(answer.stages).toEqual(['segmenting', 'refining', 'rendering'])
    const [output] = answer.outputs
    expect(output).toMatchObject({ name: 'result', contentType: 'image/png', width: 512, height: 512 })
    expect(output.length).toBe(output.bytes.byteLength)
    expect(await rawPng(output.bytes)).toMatchObject({ width: 512, height: 512, channels: 1 })
    expect(answer.done).toEqual({
      type: 'done',
      modelVersion: MODEL_VERSION,
      warnings: [],
      confidence: expect.any(Number),
      timings: {
        decode: expect.any(Number),
        segment: expect.any(Number),
        alpha: expect.any(Number),
        encode: expect.any(Number),
      },
    })
    // The model run is the slow part: segmenting is announced long before the output. (Not a whole
    // `segment` before: the model's input is prepared on the event loop before the frame is flushed.)
    const segment = answer.done?.timings?.segment ?? Number.POSITIVE_INFINITY
    expect(answer.arrivals[3] - answer.arrivals[0]).toBeGreaterThan(segment / 2)
  })

  it('returns an RGBA cutout PNG', async () => {
    const options = { quality: 'fast', alpha: { mode: 'binary', threshold: 0.5, feather: 1 }, output: 'cutout' }
    const answer = await postJob(server.url, KEY, REMOVE, removeParts(await fixture('small.jpg'), options))
    expect(answer.done?.warnings).toEqual([])
    const cutout = await rawPng(answer.outputs[0].bytes)
    expect(cutout).toMatchObject({ width: 512, height: 512, channels: 4 })
    expect(cutout.data[(150 * 512 + 255) * 4 + 3]).toBe(255)
    expect(cutout.data[3]).toBe(0)
  })

  it('keeps answering /health/ready while the model runs (the session lives in its own thread)', async () => {
    const removal = postJob(server.url, KEY, REMOVE, removeParts(await fixture('astronaut.png')))
    // Wait until the request is inside the limiter, i.e. decoding or in the model run.
    await waitFor(async () => (await readiness(server.url)).running === 1, 'the removal to start')
    // onnxruntime-node's run is synchronous: on the event loop it would hold this answer for most
    // of the model run. Measured against that run (the done frame's timings), so a slow machine,
    // slower at both, does not make it fail.
    const started = performance.now()
    const ready = await fetch(`${server.url}/health/ready`)
    const waited = performance.now() - started
    expect(ready.status).toBe(200)
    const done = (await removal).done
    const segment = done?.timings?.segment ?? 0
    expect(segment).toBeGreaterThan(0)
    expect(waited, `readiness answered in ${waited.toFixed(0)} ms during a ${segment} ms model run`).toBeLessThan(
      Math.max(300, segment / 3),
    )
  })

  it('refuses unsigned, tampered and replayed requests with 401', async () => {
    const image = await fixture('small.png')
    const unsigned = await fetch(server.url + REMOVE, { method: 'POST', body: new Uint8Array(image) })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toEqual({
      code: 'invalid_signature',
      message: 'Invalid request signature: missing bearer token',
      retryable: false,
    })

    // Signed for /v1/inspect, sent to /v1/remove.
    const inspectSigned = await signedRequest(KEY, 'POST', INSPECT, removeParts(image))
    const otherPath = await send(server.url, REMOVE, { method: 'POST', ...inspectSigned })
    expect(otherPath.status).toBe(401)
    expect(await jsonMessage(otherPath)).toMatch(/path mismatch/)

    // The same length, one byte of the image changed: that part's hash no longer matches.
    const flipped = await postParts(server.url, KEY, REMOVE, removeParts(image), {
      body: (b) => {
        const copy = new Uint8Array(b)
        copy[copy.length - 100] ^= 0xff
        return copy
      },
    })
    expect(flipped.status).toBe(401)
    expect(await jsonMessage(flipped)).toBe('Invalid request signature: hash mismatch in part image')

    // One byte of the options changed: the options part no longer matches.
    const edited = await postParts(server.url, KEY, REMOVE, removeParts(image), {
      body: (b) => {
        const copy = new Uint8Array(b)
        copy[2] ^= 0x20
        return copy
      },
    })
    expect(edited.status).toBe(401)
    expect(await jsonMessage(edited)).toBe('Invalid request signature: hash mismatch in part options')

    // Bytes appended or cut off: the body is not the parts the token lists.
    const total = JSON.stringify(MASK_OPTIONS).length + image.length
    const longer = await postParts(server.url, KEY, REMOVE, removeParts(image), {
      body: (b) => new Uint8Array([...b, 0]),
    })
    expect(longer.status).toBe(401)
    expect(await jsonMessage(longer)).toBe(
      `Invalid request signature: body length ${total + 1} is not the parts' ${total}`,
    )
    const shorter = await postParts(server.url, KEY, REMOVE, removeParts(image), { body: (b) => b.subarray(1) })
    expect(shorter.status).toBe(401)
    expect(await jsonMessage(shorter)).toMatch(/body length \d+ is not the parts'/)

    const inspect = await signedRequest(KEY, 'POST', INSPECT, [imagePart(image)])
    expect((await send(server.url, INSPECT, { method: 'POST', ...inspect })).status).toBe(200)
    const replayed = await send(server.url, INSPECT, { method: 'POST', ...inspect })
    expect(replayed.status).toBe(401)
    expect(await jsonMessage(replayed)).toMatch(/already used/)
  })

  it('answers bad options with 400 JSON, and bad images with an error frame', async () => {
    const bad = await postParts(
      server.url,
      KEY,
      REMOVE,
      removeParts(await fixture('small.png'), { ...MASK_OPTIONS, alpha: { mode: 'binary', threshold: 2, feather: 0 } }),
    )
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({
      code: 'invalid_input',
      message: 'Too big: expected number to be <=1 for alpha.threshold',
      retryable: false,
    })

    const text = await postJob(
      server.url,
      KEY,
      REMOVE,
      removeParts(new TextEncoder().encode('definitely not an image')),
    )
    expect(text.status).toBe(200)
    expect(text.frames).toEqual([
      { type: 'error', code: 'unsupported_media', message: expect.any(String), retryable: false },
    ])

    const big = await sharp({ create: { width: 6000, height: 5000, channels: 3, background: '#888' } })
      .jpeg()
      .toBuffer()
    const tooLarge = await postJob(server.url, KEY, REMOVE, removeParts(big))
    expect(tooLarge.frames).toEqual([
      {
        type: 'error',
        code: 'image_too_large',
        message: 'Expected at most 25000000 pixels but received 6000×5000 (30000000)',
        retryable: false,
      },
    ])

    // /v1/inspect is not a job route: its failures stay status answers.
    const jpeg = await fixture('small.jpg')
    const truncated = await postParts(server.url, KEY, INSPECT, [imagePart(jpeg.subarray(0, 20_000))])
    expect(truncated.status).toBe(400)
    expect(((await truncated.json()) as { code: string }).code).toBe('invalid_input')

    const truncatedJob = await postJob(server.url, KEY, REMOVE, removeParts(jpeg.subarray(0, 20_000)))
    expect(truncatedJob.error).toMatchObject({ code: 'invalid_input', retryable: false })
    expect(truncatedJob.frames).toHaveLength(1)
    // The slot of a failed job is free again.
    expect(await readiness(server.url)).toMatchObject({ running: 0, queued: 0 })
  })
})

describe('HTTP server behaviour with a stub segmenter', () => {
  it('answers 503 while the model loads', async () => {
    const app = createApp({ signingKey: KEY, model: {} })
    const ready = await app.request('/health/ready')
    expect(ready.status).toBe(503)
    expect(await ready.json()).toEqual({ status: 'loading' })
    const res = await postParts(app, KEY, REMOVE, removeParts(await fixture('small.png')))
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toMatchObject({ code: 'processor_unavailable', retryable: true })
  })

  it('sends each stage as the work reaches it, before the output', async () => {
    const { segmenter, finishNext } = heldSegmenter()
    const server = await stubServer(segmenter)
    try {
      const res = await postParts(server.url, KEY, REMOVE, removeParts(await fixture('small.jpg')))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(FRAMES_CONTENT_TYPE)
      expect(res.headers.get('x-model-version')).toBe('stub@1')
      if (!res.body) throw new Error('expected a body')
      const frames = readFrames(res.body)

      // The first frame comes while the segmenter is still held: the work holds its slot.
      const first = await frames.next()
      expect(first.value).toEqual({ type: 'stage', stage: 'segmenting' })
      expect(await readiness(server.url)).toMatchObject({ running: 1 })

      let finished = false
      void finishNext().then(() => (finished = true))
      const rest = [] as string[]
      for await (const frame of frames) {
        if (frame.type === 'output') {
          // The output waited for the segmenter; the first stage did not.
          expect(finished).toBe(true)
          rest.push(`output ${frame.name}`)
          expect(await rawPng(new Uint8Array(await new Response(frame.body).arrayBuffer()))).toMatchObject({
            width: 512,
            height: 512,
            channels: 1,
          })
        } else rest.push(frame.type === 'stage' ? `stage ${frame.stage}` : frame.type)
      }
      expect(rest).toEqual(['stage refining', 'stage rendering', 'output result', 'done'])
      expect(await readiness(server.url)).toMatchObject({ running: 0 })
    } finally {
      await server.close()
    }
  })

  it('warns in done when maxPixels scaled the image down, naming both sizes', async () => {
    const app = createApp({ signingKey: KEY, model: { current: stubSegmenter() } })
    const photo = await sharp({ create: { width: 1024, height: 1024, channels: 3, background: '#3a6' } })
      .png()
      .toBuffer()
    const preview = await postJob(app, KEY, REMOVE, removeParts(photo, { ...MASK_OPTIONS, maxPixels: 250_000 }))
    expect(preview.outputs[0]).toMatchObject({ width: 500, height: 500 })
    expect(await rawPng(preview.outputs[0].bytes)).toMatchObject({ width: 500, height: 500 })
    expect(preview.done?.warnings).toEqual([
      { code: 'preview_downscaled', message: expect.stringContaining('from 1024×1024 to 500×500') },
    ])

    const full = await postJob(app, KEY, REMOVE, removeParts(photo))
    expect(full.outputs[0]).toMatchObject({ width: 1024, height: 1024 })
    expect(full.done?.warnings).toEqual([])

    // A budget the image is already within changes nothing, and says nothing.
    const within = await postJob(app, KEY, REMOVE, removeParts(photo, { ...MASK_OPTIONS, maxPixels: 2_000_000 }))
    expect(within.outputs[0]).toMatchObject({ width: 1024, height: 1024 })
    expect(within.done?.warnings).toEqual([])
  })

  it('refuses a part hash mismatch with 401 and a missing part with 400', async () => {
    const app = createApp({ signingKey: KEY, model: { current: stubSegmenter() } })
    const image = await fixture('small.png')

    const mismatch = await postParts(app, KEY, REMOVE, removeParts(image), {
      body: (b) => {
        const copy = new Uint8Array(b)
        copy[copy.length - 1] ^= 1
        return copy
      },
    })
    expect(mismatch.status).toBe(401)
    expect(await mismatch.json()).toEqual({
      code: 'invalid_signature',
      message: 'Invalid request signature: hash mismatch in part image',
      retryable: false,
    })

    const noImage = await postParts(app, KEY, REMOVE, [optionsPart(MASK_OPTIONS)])
    expect(noImage.status).toBe(400)
    expect(await noImage.json()).toEqual({
      code: 'invalid_input',
      message: 'Expected a part named image',
      retryable: false,
    })

    const noOptions = await postParts(app, KEY, REMOVE, [imagePart(image)])
    expect(noOptions.status).toBe(400)
    expect(await noOptions.json()).toMatchObject({ code: 'invalid_input', message: 'Expected an options part' })

    // An image under another name is not the image.
    const misnamed = await postParts(app, KEY, REMOVE, [optionsPart(MASK_OPTIONS), imagePart(image, 'photo')])
    expect(misnamed.status).toBe(400)
    expect(await misnamed.json()).toMatchObject({ message: 'Expected a part named image' })

    const inspectNothing = await postParts(app, KEY, INSPECT, [])
    expect(inspectNothing.status).toBe(400)
    expect(await inspectNothing.json()).toMatchObject({ message: 'Expected a part named image' })
  })

  it('refuses bad options with 400 JSON worded from the schema', async () => {
    const app = createApp({ signingKey: KEY, model: { current: stubSegmenter() } })
    const image = await fixture('small.png')
    const refused = async (options: unknown) => {
      const res = await postParts(app, KEY, REMOVE, removeParts(image, options))
      expect(res.status).toBe(400)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      const body = (await res.json()) as { code: string; retryable: boolean; message: string }
      expect(body).toMatchObject({ code: 'invalid_input', retryable: false })
      return body.message
    }
    expect(await refused({ ...MASK_OPTIONS, format: 'png' })).toBe('Unknown field format: options are strict')
    expect(await refused({ ...MASK_OPTIONS, alpha: { mode: 'binary', threshold: 1.5, feather: 0 } })).toBe(
      'Too big: expected number to be <=1 for alpha.threshold',
    )
    expect(await refused({ ...MASK_OPTIONS, alpha: { mode: 'raw', feather: 5 } })).toBe(
      'Too big: expected number to be <=4 for alpha.feather',
    )
    expect(await refused({ ...MASK_OPTIONS, maxPixels: 10 })).toBe(
      'Too small: expected number to be >=1024 for maxPixels',
    )
    expect(await refused({ ...MASK_OPTIONS, quality: 'best' })).toBe(
      'Invalid option: expected one of "fast"|"balanced"|"high" for quality',
    )
    const notJson = await postParts(app, KEY, REMOVE, [
      { name: 'options', type: 'application/json', body: new TextEncoder().encode('quality=fast') },
      imagePart(image),
    ])
    expect(await notJson.json()).toMatchObject({
      code: 'invalid_input',
      message: 'Expected the options part to be JSON',
    })
  })

  it('reports images that fail after the answer began as error frames with their code', async () => {
    const app = createApp({ signingKey: KEY, model: { current: stubSegmenter() } })
    const errorOf = async (image: Uint8Array) => {
      const answer = await postJob(app, KEY, REMOVE, removeParts(image))
      expect(answer.status).toBe(200)
      // The error ends the answer: no stage was reached, nothing follows.
      expect(answer.frames).toHaveLength(1)
      expect(answer.done).toBeUndefined()
      return answer.error
    }
    const tiny = await sharp({ create: { width: 31, height: 64, channels: 3, background: '#888' } })
      .png()
      .toBuffer()
    expect(await errorOf(tiny)).toEqual({
      type: 'error',
      code: 'invalid_input',
      message: 'Expected an image of at least 32×32 pixels but received 31×64',
      retryable: false,
    })
    const png = await fixture('small.png')
    expect(await errorOf(png.subarray(0, Math.floor(png.length / 2)))).toMatchObject({
      code: 'invalid_input',
      retryable: false,
    })
    expect(await errorOf(new TextEncoder().encode('hello, this is not an image at all'))).toMatchObject({
      code: 'unsupported_media',
      retryable: false,
    })
  })

  it('reports a segmenter failure as a processing_failed frame after the stage it failed in', async () => {
    const failing: Segmenter = {
      version: 'broken@1',
      input: STUB_INPUT,
      async segment() {
        throw new Error('session exploded')
      },
      async close() {},
    }
    const limiter = new Limiter({ concurrency: 1, queueLimit: 0 })
    const app = createApp({ signingKey: KEY, model: { current: failing }, limiter })
    // A 500 is logged with its cause; keep it out of the test output.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    let answer: JobAnswer
    try {
      answer = await postJob(app, KEY, REMOVE, removeParts(await fixture('small.png')))
      expect(logged).toHaveBeenCalledOnce()
    } finally {
      logged.mockRestore()
    }
    expect(answer.frames).toEqual([
      { type: 'stage', stage: 'segmenting' },
      {
        type: 'error',
        code: 'processing_failed',
        message: 'Background removal failed with model broken@1: session exploded',
        retryable: false,
      },
    ])
    expect(limiter.stats).toMatchObject({ running: 0, queued: 0 })
  })

  it('queues up to the limit, then answers 503 with Retry-After: 1', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLimit: 1 })
    // Each run holds its slot until the test lets it finish, however slow the machine.
    const { segmenter, finishNext } = heldSegmenter()
    const server = await stubServer(segmenter, limiter)
    const target: Target = server.url
    try {
      const image = await fixture('small.jpg')
      const first = postParts(target, KEY, REMOVE, removeParts(image))
      await waitFor(() => limiter.stats.running === 1, 'the first request to take the slot')
      const second = postParts(target, KEY, REMOVE, removeParts(image))
      await waitFor(() => limiter.stats.queued === 1, 'the second request to queue')
      // Every slot busy and the queue full: readiness says so, the way the edge expects.
      const saturated = await fetch(`${server.url}/health/ready`)
      expect(saturated.status).toBe(503)
      expect(saturated.headers.get('retry-after')).toBe('1')
      expect(await saturated.json()).toEqual({
        status: 'saturated',
        modelVersion: 'stub@1',
        running: 1,
        queued: 1,
        concurrency: 1,
        queueLimit: 1,
        dropped: 0,
        stopped: 0,
      })
      const third = await postParts(target, KEY, REMOVE, removeParts(image))
      expect(third.status).toBe(503)
      expect(third.headers.get('retry-after')).toBe('1')
      expect(await third.json()).toMatchObject({ code: 'processor_unavailable', retryable: true })
      // The first answer began when it was admitted; it ends when its work does.
      await finishNext()
      const firstAnswer = await collectFrames(await first)
      expect(firstAnswer.status).toBe(200)
      expect(firstAnswer.done).toBeDefined()
      // One running, none queued: a request would be queued, so the server is ready again.
      const again = await fetch(`${server.url}/health/ready`)
      expect(again.status).toBe(200)
      expect(await again.json()).toMatchObject({ status: 'ready', running: 1, queued: 0 })
      await finishNext()
      const secondAnswer = await collectFrames(await second)
      expect(secondAnswer.done).toBeDefined()
    } finally {
      await server.close()
    }
  })

  it('refuses a body over the limit with 413', async () => {
    const app = createApp({ signingKey: KEY, model: { current: stubSegmenter() }, bodyLimits: { image: 1000 } })
    const res = await postParts(app, KEY, INSPECT, [imagePart(await fixture('small.webp'))])
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ code: 'image_too_large' })
  })
})
