import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signRequest } from '../src/auth.js'
import { Limiter } from '../src/limiter.js'
import { createSegmenter, type Segmenter } from '../src/segmentation/index.js'
import { createApp, startServer, type RunningServer } from '../src/server.js'
import { fixture, rawPng, waitFor } from './helpers.js'

const KEY = 'server-test-key'
const REMOVE = '/v1/remove?quality=balanced&alpha=raw&feather=0&output=mask'

/** POSTs `body` to `path` with a valid signature (unless `auth` overrides the header). */
async function post(base: string, path: string, body: Uint8Array, auth?: string): Promise<Response> {
  const authorization = auth ?? (await signRequest(KEY, { method: 'POST', path, body }))
  return fetch(base + path, {
    method: 'POST',
    body,
    headers: { authorization, 'content-type': 'application/octet-stream' },
  })
}

/** A segmenter that answers a flat mask at once: for HTTP behaviour without the model. */
const stubSegmenter = (): Segmenter => ({
  version: 'stub@1',
  async segment(image) {
    return { data: new Uint8Array(image.width * image.height).fill(200), width: image.width, height: image.height }
  },
  async close() {},
})

/**
 * A stub segmenter whose runs end only when the test releases them, oldest first: the test, not
 * the machine's speed, decides how long each request stays in its slot.
 */
function gatedSegmenter() {
  const waiting: (() => void)[] = []
  let started = 0
  const segmenter: Segmenter = {
    version: 'stub@1',
    async segment(image) {
      started += 1
      await new Promise<void>((release) => waiting.push(release))
      return { data: new Uint8Array(image.width * image.height).fill(200), width: image.width, height: image.height }
    },
    async close() {},
  }
  return {
    segmenter,
    started: () => started,
    release: () => waiting.shift()?.(),
    releaseAll: () => {
      for (const release of waiting.splice(0)) release()
    },
  }
}

type Readiness = { status: string; running?: number; queued?: number }
const readiness = async (url: string) => (await (await fetch(`${url}/health/ready`)).json()) as Readiness

describe('HTTP server with the real model, end to end on 127.0.0.1', () => {
  let segmenter: Segmenter
  let server: RunningServer
  beforeAll(async () => {
    segmenter = await createSegmenter()
    server = await startServer(createApp({ signingKey: KEY, model: { current: segmenter } }), {
      port: 0,
      host: '127.0.0.1',
    })
  })
  afterAll(async () => {
    await server?.close()
    await segmenter?.close()
  })

  it('answers the health routes unsigned', async () => {
    expect(await (await fetch(`${server.url}/health/live`)).json()).toEqual({ status: 'ok' })
    const ready = await fetch(`${server.url}/health/ready`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({
      status: 'ready',
      modelVersion: 'isnet-general@1.4.5+fp16',
      running: 0,
      queued: 0,
      concurrency: 1,
      queueLimit: 8,
    })
  })

  it('inspects an image', async () => {
    const res = await post(server.url, '/v1/inspect', await fixture('small.webp'))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ width: 512, height: 512, mimeType: 'image/webp' })
  })

  it('returns a 1-channel mask PNG with the protocol headers', async () => {
    const res = await post(server.url, REMOVE, await fixture('astronaut.png'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('x-model-version')).toBe('isnet-general@1.4.5+fp16')
    expect(res.headers.get('x-image-width')).toBe('512')
    expect(res.headers.get('x-image-height')).toBe('512')
    expect(res.headers.get('server-timing')).toMatch(
      /^decode;dur=[\d.]+, segment;dur=[\d.]+, alpha;dur=[\d.]+, encode;dur=[\d.]+$/,
    )
    const body = new Uint8Array(await res.arrayBuffer())
    expect(res.headers.get('content-length')).toBe(String(body.length))
    expect(await rawPng(body)).toMatchObject({ width: 512, height: 512, channels: 1 })
  })

  it('returns an RGBA cutout PNG', async () => {
    const path = '/v1/remove?quality=fast&alpha=binary&threshold=0.5&feather=1&output=cutout'
    const res = await post(server.url, path, await fixture('small.jpg'))
    expect(res.status).toBe(200)
    const cutout = await rawPng(new Uint8Array(await res.arrayBuffer()))
    expect(cutout).toMatchObject({ width: 512, height: 512, channels: 4 })
    expect(cutout.data[(150 * 512 + 255) * 4 + 3]).toBe(255)
    expect(cutout.data[3]).toBe(0)
  })

  it('keeps answering /health/ready while the model runs (the session lives in its own thread)', async () => {
    const removal = post(server.url, REMOVE, await fixture('astronaut.png'))
    // Wait until the request is inside the limiter, i.e. decoding or in the model run.
    await waitFor(async () => (await readiness(server.url)).running === 1, 'the removal to start')
    // onnxruntime-node's run is synchronous: on the event loop it would hold this answer for most
    // of the model run. Measured against that run (Server-Timing), so a slow machine, slower at
    // both, does not make it fail.
    const started = performance.now()
    const ready = await fetch(`${server.url}/health/ready`)
    const waited = performance.now() - started
    expect(ready.status).toBe(200)
    const res = await removal
    expect(res.status).toBe(200)
    const segment = Number(/segment;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1])
    expect(segment).toBeGreaterThan(0)
    expect(waited, `readiness answered in ${waited.toFixed(0)} ms during a ${segment} ms model run`).toBeLessThan(
      Math.max(300, segment / 3),
    )
  })

  it('refuses unsigned, tampered and replayed requests with 401', async () => {
    const body = await fixture('small.png')
    const unsigned = await fetch(server.url + REMOVE, { method: 'POST', body })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toEqual({
      code: 'invalid_signature',
      message: 'Invalid request signature: missing bearer token',
      retryable: false,
    })

    const auth = await signRequest(KEY, { method: 'POST', path: REMOVE, body })
    const tampered = await post(server.url, REMOVE.replace('output=mask', 'output=cutout'), body, auth)
    expect(tampered.status).toBe(401)
    expect(((await tampered.json()) as { message: string }).message).toMatch(/path mismatch/)

    const otherBody = await post(
      server.url,
      REMOVE,
      await fixture('small.jpg'),
      await signRequest(KEY, { method: 'POST', path: REMOVE, body }),
    )
    expect(otherBody.status).toBe(401)
    expect(((await otherBody.json()) as { message: string }).message).toMatch(/body hash mismatch/)

    const inspectAuth = await signRequest(KEY, { method: 'POST', path: '/v1/inspect', body })
    expect((await post(server.url, '/v1/inspect', body, inspectAuth)).status).toBe(200)
    const replayed = await post(server.url, '/v1/inspect', body, inspectAuth)
    expect(replayed.status).toBe(401)
    expect(((await replayed.json()) as { message: string }).message).toMatch(/already used/)
  })

  it('maps bad inputs to 400, 413 and 415', async () => {
    const bad = await post(
      server.url,
      '/v1/remove?quality=balanced&alpha=binary&threshold=2&feather=0&output=mask',
      await fixture('small.png'),
    )
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({
      code: 'invalid_input',
      message: 'Expected number between 0 and 1 for threshold but received 2 of type string',
      retryable: false,
    })

    const text = await post(server.url, REMOVE, new TextEncoder().encode('definitely not an image'))
    expect(text.status).toBe(415)
    expect(((await text.json()) as { code: string }).code).toBe('unsupported_media')

    const big = await sharp({ create: { width: 6000, height: 5000, channels: 3, background: '#888' } })
      .jpeg()
      .toBuffer()
    const tooLarge = await post(server.url, REMOVE, big)
    expect(tooLarge.status).toBe(413)
    expect(((await tooLarge.json()) as { code: string }).code).toBe('image_too_large')

    const jpeg = await fixture('small.jpg')
    const truncated = await post(server.url, '/v1/inspect', jpeg.subarray(0, 20_000))
    expect(truncated.status).toBe(400)
    expect(((await truncated.json()) as { code: string }).code).toBe('invalid_input')
  })
})

describe('HTTP server behaviour with a stub segmenter', () => {
  it('answers 503 while the model loads', async () => {
    const app = createApp({ signingKey: KEY, model: {} })
    const ready = await app.request('/health/ready')
    expect(ready.status).toBe(503)
    expect(await ready.json()).toEqual({ status: 'loading' })
    const body = await fixture('small.png')
    const res = await app.request(REMOVE, {
      method: 'POST',
      body,
      headers: { authorization: await signRequest(KEY, { method: 'POST', path: REMOVE, body }) },
    })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toMatchObject({ code: 'processor_unavailable', retryable: true })
  })

  it('queues up to the limit, then answers 503 with Retry-After: 1', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLimit: 1 })
    const gate = gatedSegmenter()
    const server = await startServer(createApp({ signingKey: KEY, model: { current: gate.segmenter }, limiter }), {
      port: 0,
    })
    try {
      const body = await fixture('small.jpg')
      const first = post(server.url, REMOVE, body)
      await waitFor(async () => gate.started() === 1, 'the first request to reach the model')
      const second = post(server.url, REMOVE, body)
      await waitFor(async () => (await readiness(server.url)).queued === 1, 'the second request to queue')
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
      })
      const third = await post(server.url, REMOVE, body)
      expect(third.status).toBe(503)
      expect(third.headers.get('retry-after')).toBe('1')
      expect(await third.json()).toMatchObject({ code: 'processor_unavailable', retryable: true })
      gate.release()
      expect((await first).status).toBe(200)
      await waitFor(async () => gate.started() === 2, 'the second request to leave the queue')
      // One running, none queued: a request would be queued, so the server is ready again.
      const again = await fetch(`${server.url}/health/ready`)
      expect(again.status).toBe(200)
      expect(await again.json()).toMatchObject({ status: 'ready', running: 1, queued: 0 })
      gate.release()
      expect((await second).status).toBe(200)
    } finally {
      gate.releaseAll()
      await server.close()
    }
  })

  it('refuses a body over the limit with 413', async () => {
    const app = createApp({ signingKey: KEY, model: { current: stubSegmenter() }, maxBodyBytes: 1000 })
    const body = await fixture('small.webp')
    const res = await app.request('/v1/inspect', {
      method: 'POST',
      body,
      headers: { authorization: await signRequest(KEY, { method: 'POST', path: '/v1/inspect', body }) },
    })
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ code: 'image_too_large' })
  })
})
