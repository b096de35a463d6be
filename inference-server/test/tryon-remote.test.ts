/**
 * The remote try-on backend (`TRYON_BACKEND=remote`) against a small stand-in on 127.0.0.1 that
 * speaks the protocol of docs/try-on.md: what it is sent, its answer passed on, its refusals
 * mapped, and the configuration read from the environment. No model runs here.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TRYON_WARNINGS } from '../../src/contract/tryon.js'
import { imagePart, optionsPart } from '../src/auth.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp } from '../src/server.js'
import { tryOnConfigFromEnv } from '../src/tryon/model.js'
import { createRemoteTryOn, type RemoteTryOnRequest } from '../src/tryon/remote.js'
import { makeTshirt } from './garments.js'
import { fixture, postJob, rawPng, STUB_INPUT } from './helpers.js'

const KEY = 'tryon-remote-key'
const TOKEN = 'gpu-token'

const stubSegmenter: Segmenter = {
  version: 'stub@1',
  input: STUB_INPUT,
  segment: async () => {
    throw new Error('the remote backend must not run the segmentation model')
  },
  close: async () => {},
}

/** What the stand-in saw of each call. */
interface Seen {
  authorization?: string
  request: RemoteTryOnRequest
  person: { width?: number; height?: number }
  garment: { width?: number; height?: number }
}

/**
 * The stand-in GPU server: seed 13 → 422 pose_not_detected, seed 503 → busy, seed 99 → a result
 * of the wrong size; otherwise a grey PNG of the asked size, landmarks and one warning.
 */
function standIn(seen: Seen[]): Server {
  return createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const form = await new Request('http://stand-in/', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body: Buffer.concat(chunks),
    }).formData()
    const request = JSON.parse(await (form.get('request') as Blob).text()) as RemoteTryOnRequest
    const meta = async (name: string) => sharp(Buffer.from(await (form.get(name) as Blob).arrayBuffer())).metadata()
    const [person, garment] = await Promise.all([meta('person'), meta('garment')])
    seen.push({ authorization: req.headers.authorization, request, person, garment })
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (request.seed === 13) return json(422, { code: TRYON_WARNINGS.noPose, message: 'no body in the photo' })
    if (request.seed === 503) return json(503, { message: 'all GPUs busy' })
    const width = request.seed === 99 ? request.width + 1 : request.width
    const png = await sharp({ create: { width, height: request.height, channels: 3, background: '#808080' } })
      .png()
      .toBuffer()
    const answer = new FormData()
    answer.append('result', new Blob([png], { type: 'image/png' }), 'result.png')
    const landmarks = {
      width,
      height: request.height,
      points: { nose: { x: 1, y: 2, score: 0.9 } },
      region: [0, 0, 4, 4],
    }
    answer.append('landmarks', JSON.stringify(landmarks))
    answer.append('warnings', JSON.stringify([{ code: 'low_resolution', message: 'the garment photo is small' }]))
    const body = new Response(answer)
    res.writeHead(200, { 'content-type': body.headers.get('content-type') ?? '' })
    res.end(Buffer.from(await body.arrayBuffer()))
  })
}

describe('the remote try-on backend against a stand-in', () => {
  const seen: Seen[] = []
  let server: Server
  let app: ReturnType<typeof createApp>
  let person: Buffer
  let garment: Buffer
  beforeAll(async () => {
    server = standIn(seen)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const tryOn = createRemoteTryOn({
      url: `http://127.0.0.1:${port}/v1/try-on`,
      token: TOKEN,
      timeoutMs: 10_000,
      model: 'stand-in',
    })
    app = createApp({ signingKey: KEY, model: { current: stubSegmenter }, tryOn })
    person = await fixture('astronaut.png')
    garment = await makeTshirt()
  })
  afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())))

  const post = (seed: number) =>
    postJob(app, KEY, '/v1/try-on', [
      optionsPart({ category: 'upper_body', seed }),
      imagePart(person, 'person'),
      imagePart(garment, 'garment'),
    ])

  it('sends the request, both photos as PNGs and the token; passes the answer on', async () => {
    const answer = await post(5)
    expect(answer.error).toBeUndefined()
    expect(answer.stages).toEqual(['rendering'])
    expect(answer.headers.get('x-model-version')).toBe('remote:stand-in')
    const call = seen.at(-1)
    expect(call?.authorization).toBe(`Bearer ${TOKEN}`)
    expect(call?.request).toEqual({ protocol: 1, category: 'upper_body', seed: 5, width: 512, height: 512 })
    expect([call?.person.width, call?.person.height]).toEqual([512, 512])
    expect([call?.garment.width, call?.garment.height]).toEqual([600, 640])
    const result = await rawPng(answer.outputs[0].bytes)
    expect([result.width, result.height]).toEqual([512, 512])
    expect(JSON.parse(new TextDecoder().decode(answer.outputs[1].bytes))).toMatchObject({ points: { nose: { x: 1 } } })
    expect(answer.done?.warnings.map((w) => w.code)).toEqual([TRYON_WARNINGS.experimental, 'low_resolution'])
  })

  it("maps the backend's pose_not_detected to invalid_input naming the person image", async () => {
    const answer = await post(13)
    expect(answer.error).toMatchObject({ code: 'invalid_input', retryable: false })
    expect(answer.error?.message).toMatch(/^person: no person was found in the person image/)
  })

  it('maps a busy backend to processor_unavailable and a wrong-sized result to processing_failed', async () => {
    expect((await post(503)).error).toMatchObject({ code: 'processor_unavailable', retryable: true })
    const wrong = await post(99)
    expect(wrong.error?.code).toBe('processing_failed')
    expect(wrong.error?.message).toContain('513×512')
  })

  it('reads its configuration from the environment', () => {
    expect(tryOnConfigFromEnv({})).toEqual({ backend: 'cpu' })
    expect(tryOnConfigFromEnv({ TRYON_BACKEND: 'remote', TRYON_REMOTE_URL: 'http://gpu:8000/v1/try-on' })).toEqual({
      backend: 'remote',
      url: 'http://gpu:8000/v1/try-on',
      token: undefined,
      timeoutMs: 120_000,
      model: 'remote',
    })
    expect(() => tryOnConfigFromEnv({ TRYON_BACKEND: 'remote' })).toThrow(/TRYON_REMOTE_URL/)
    expect(() => tryOnConfigFromEnv({ TRYON_BACKEND: 'gpu' })).toThrow(/TRYON_BACKEND/)
  })
})
