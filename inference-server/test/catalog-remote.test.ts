/**
 * The remote generative backend (`RemoteCatalogGenerator`, docs/catalog.md "Remote backend
 * protocol") against a stand-in GPU server on 127.0.0.1 that speaks the protocol: it reads the
 * multipart request (the `request` JSON and the reference PNGs), records it, and answers a PNG of
 * the size asked, or whatever failure a test sets. Through the generator and through
 * `POST /v1/catalog`. No model runs.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import sharp from 'sharp'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { CatalogOptionsSchema } from '../../src/contract/catalog.js'
import { imagePart, optionsPart } from '../src/auth.js'
import { createRemoteGenerator, mapRemoteStatus, type RemoteRequest } from '../src/catalog/remote.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp } from '../src/server.js'
import { fixture, postJob, STUB_INPUT } from './helpers.js'

const KEY = 'catalog-remote-test-key'
const TOKEN = 'gpu-secret'

/** What the stand-in received: headers, the request JSON, each reference's part name, type and size. */
interface Received {
  authorization?: string
  contentType?: string
  request: RemoteRequest
  references: Array<{ name: string; type: string; filename: string; width?: number; height?: number }>
}

let server: Server
let url: string
let received: Received[] = []
/** How the stand-in answers the next requests. */
let behaviour: (req: Received, res: ServerResponse) => Promise<void> | void

const pngOf = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .png()
    .toBuffer()

const answerPng = async ({ request }: Received, res: ServerResponse) => {
  const png = await pngOf(request.width, request.height)
  res.writeHead(200, { 'content-type': 'image/png', 'x-model-version': 'stand-in@1' }).end(png)
}

async function readRequest(req: IncomingMessage): Promise<Received> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  // undici's Response parses multipart/form-data: the same parser a Node GPU server could use.
  const form = await new Response(Buffer.concat(chunks), {
    headers: { 'content-type': req.headers['content-type'] ?? '' },
  }).formData()
  const request = JSON.parse(await (form.get('request') as Blob).text()) as RemoteRequest
  const references: Received['references'] = []
  for (const [name, value] of form.entries()) {
    if (name === 'request' || typeof value === 'string') continue
    const meta = await sharp(Buffer.from(await value.arrayBuffer())).metadata()
    references.push({ name, type: value.type, filename: (value as File).name, width: meta.width, height: meta.height })
  }
  return { authorization: req.headers.authorization, contentType: req.headers['content-type'], request, references }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      const got = await readRequest(req)
      received.push(got)
      await behaviour(got, res)
    })().catch((err) => res.writeHead(500).end(String(err)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/catalog/generate`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  received = []
  behaviour = answerPng
})

const stubSegmenter: Segmenter = {
  version: 'stub@1',
  input: STUB_INPUT,
  segment: async () => {
    throw new Error('the remote backend runs no segmentation here')
  },
  async close() {},
}
const context = { segmenter: stubSegmenter, onStage: () => {} }
const remote = (timeoutMs = 10_000) => createRemoteGenerator({ url, token: TOKEN, timeoutMs, model: 'stand-in' })

describe('RemoteCatalogGenerator', () => {
  it('sends the prompt, steps, seed, size and references; returns the PNG', async () => {
    const front = await fixture('rocket.jpg')
    const back = await fixture('astronaut.png')
    const options = CatalogOptionsSchema.parse({
      prompt: 'Studio shot 🚀, soft light',
      steps: 12,
      seed: 99,
      width: 768,
      height: 512,
      background: '#F2E8DA',
      shadow: 'hard',
      layout: 'views',
    })
    const result = await remote().generate(
      [
        { name: 'reference-0', bytes: front },
        { name: 'reference-1', bytes: back },
      ],
      options,
      context,
    )
    expect(received).toHaveLength(1)
    const [got] = received
    expect(got.authorization).toBe(`Bearer ${TOKEN}`)
    expect(got.contentType).toMatch(/^multipart\/form-data; boundary=/)
    expect(got.request).toEqual({
      protocol: 1,
      prompt: 'Studio shot 🚀, soft light',
      steps: 12,
      seed: 99,
      width: 768,
      height: 512,
      background: '#F2E8DA',
      shadow: 'hard',
      layout: 'views',
      references: 2,
    })
    expect(got.references).toEqual([
      { name: 'reference-0', type: 'image/png', filename: 'reference-0.png', width: 640, height: 427 },
      { name: 'reference-1', type: 'image/png', filename: 'reference-1.png', width: 512, height: 512 },
    ])
    expect(result).toMatchObject({ width: 768, height: 512, warnings: [] })
    expect(await sharp(result.png).metadata()).toMatchObject({ format: 'png', width: 768, height: 512 })
  })

  it('sends references of at most 2048 px a side', async () => {
    const big = await sharp(await fixture('rocket.jpg'))
      .resize(3000, 2000)
      .jpeg()
      .toBuffer()
    await remote().generate([{ name: 'reference-0', bytes: big }], CatalogOptionsSchema.parse({ seed: 1 }), context)
    expect(received[0].references[0]).toMatchObject({ width: 2048, height: 1365 })
  })

  it('maps the backend failures to inference error codes', async () => {
    expect([400, 413, 415, 422, 429, 500, 502, 503].map(mapRemoteStatus)).toEqual([
      'invalid_input',
      'image_too_large',
      'unsupported_media',
      'invalid_input',
      'processor_unavailable',
      'processing_failed',
      'processing_failed',
      'processor_unavailable',
    ])
    const refs = [{ name: 'reference-0', bytes: await fixture('coffee.png') }]
    const options = CatalogOptionsSchema.parse({ seed: 1 })
    const failure = (run: Promise<unknown>) =>
      run.then(
        () => expect.fail('expected a failure'),
        (err) => err,
      )

    behaviour = (_, res) =>
      void res.writeHead(422, { 'content-type': 'application/json' }).end('{"message":"prompt refused"}')
    expect(await failure(remote().generate(refs, options, context))).toMatchObject({
      code: 'invalid_input',
      message: 'The catalog backend answered 422: prompt refused',
    })
    behaviour = (_, res) => void res.writeHead(503).end('busy')
    expect(await failure(remote().generate(refs, options, context))).toMatchObject({
      code: 'processor_unavailable',
      retryable: true,
    })
    behaviour = async (_, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(await pngOf(512, 512))
    expect(await failure(remote().generate(refs, options, context))).toMatchObject({
      code: 'processing_failed',
      message: 'The catalog backend answered a 512×512 image; expected 1024×1024',
    })
    behaviour = (_, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end('not a png')
    expect(await failure(remote().generate(refs, options, context))).toMatchObject({ code: 'processing_failed' })
    behaviour = async (req, res) => {
      await new Promise((r) => setTimeout(r, 1500))
      await answerPng(req, res)
    }
    expect(await failure(remote(300).generate(refs, options, context))).toMatchObject({
      code: 'processor_unavailable',
      message: 'The catalog backend did not answer within 300 ms',
    })
    const unreachable = createRemoteGenerator({ url: 'http://127.0.0.1:9/x', timeoutMs: 2000, model: 'none' })
    expect(await failure(unreachable.generate(refs, options, context))).toMatchObject({ code: 'processor_unavailable' })
  })
})

describe('POST /v1/catalog with the remote backend', () => {
  it('streams the backend image as the result, stage rendering, named remote:<model>', async () => {
    const app = createApp({ signingKey: KEY, model: { current: stubSegmenter }, catalog: remote() })
    const answer = await postJob(app, KEY, '/v1/catalog', [
      optionsPart({ seed: 5, references: 1, prompt: 'a mug on linen', steps: 40 }),
      imagePart(await fixture('coffee.png'), 'reference-0'),
    ])
    expect(answer.error).toBeUndefined()
    expect(answer.headers.get('x-model-version')).toBe('remote:stand-in')
    expect(answer.stages).toEqual(['rendering'])
    expect(answer.outputs[0]).toMatchObject({ name: 'result', contentType: 'image/png', width: 1024, height: 1024 })
    expect(received[0].request).toMatchObject({ prompt: 'a mug on linen', steps: 40, seed: 5, references: 1 })
    expect(answer.done?.warnings).toEqual([])
  })
})
