/**
 * A caller that goes away (the edge aborts a call past its deadline, or on cancel): its request
 * leaves the queue without running, and running work stops at its next step, on a real HTTP
 * server on 127.0.0.1 with real client disconnects. Observed through `/health/ready`'s counters
 * and the model's own call count.
 */
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import sharp from 'sharp'
import { afterEach, describe, expect, it } from 'vitest'
import { signedRequest } from '../src/auth.js'
import { Limiter, type LimiterStats } from '../src/limiter.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp, type RunningServer, startServer } from '../src/server.js'
import { collectFrames, fixture, MASK_OPTIONS, postParts, removeParts, STUB_INPUT, waitFor } from './helpers.js'

const KEY = 'abandon-test-key'
const REMOVE = '/v1/remove'

/**
 * A model whose runs wait for `open()`, counting how many began. Its masks are all `value`: 128 is
 * unsure of every pixel, so `high` plans close-ups over the whole frame. The first `ungated` runs
 * answer at once (`high`'s base run, so the test can catch it among its close-ups).
 */
function gatedSegmenter({ value = 200, ungated = 0 } = {}) {
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  const model = {
    runs: 0,
    open: () => open(),
    segmenter: {
      version: 'gated@1',
      input: STUB_INPUT,
      async segment(image) {
        if (++model.runs > ungated) await gate
        return {
          data: new Uint8Array(image.width * image.height).fill(value),
          width: image.width,
          height: image.height,
        }
      },
      async close() {},
    } satisfies Segmenter,
  }
  return model
}

/** POSTs a removal that this test can abandon: aborting closes the connection, as the edge's deadline does. */
async function abandonable(url: string, image: Uint8Array, options: unknown = MASK_OPTIONS) {
  const caller = new AbortController()
  const { headers, body } = await signedRequest(KEY, 'POST', REMOVE, removeParts(image, options))
  const answer = fetch(url + REMOVE, { method: 'POST', headers, body: new Uint8Array(body), signal: caller.signal })
  answer.catch(() => undefined)
  return { answer, abandon: () => caller.abort() }
}

const readiness = async (url: string) => (await (await fetch(`${url}/health/ready`)).json()) as LimiterStats

let server: RunningServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('a caller that goes away', () => {
  it('takes its request out of the queue: the model never runs for it', async () => {
    const model = gatedSegmenter()
    const limiter = new Limiter({ concurrency: 1, queueLimit: 2 })
    server = await startServer(createApp({ signingKey: KEY, model: { current: model.segmenter }, limiter }), {
      port: 0,
    })
    const image = await fixture('small.png')
    const first = postParts(server.url, KEY, REMOVE, removeParts(image))
    await waitFor(() => model.runs === 1, 'the first request to reach the model')
    const second = await abandonable(server.url, image)
    await waitFor(async () => (await readiness(server!.url)).queued === 1, 'the second request to queue')

    second.abandon()
    await waitFor(async () => (await readiness(server!.url)).queued === 0, 'the abandoned request to leave the queue')
    expect(await readiness(server.url)).toMatchObject({ running: 1, queued: 0, dropped: 1, stopped: 0 })

    model.open()
    expect((await collectFrames(await first)).done).toBeDefined()
    // The slot went back to the limiter, not to the dropped request: a new one runs next.
    const third = await collectFrames(await postParts(server.url, KEY, REMOVE, removeParts(image)))
    expect(third.done).toBeDefined()
    expect(model.runs).toBe(2)
    expect(await readiness(server.url)).toMatchObject({ running: 0, queued: 0, dropped: 1, stopped: 0 })
  })

  it('stops running work at its next step: no output is encoded or sent, and the slot is freed', async () => {
    const model = gatedSegmenter()
    const limiter = new Limiter({ concurrency: 1, queueLimit: 2 })
    server = await startServer(createApp({ signingKey: KEY, model: { current: model.segmenter }, limiter }), {
      port: 0,
    })
    const sockets: Socket[] = []
    ;(server.server as Server).on('connection', (socket: Socket) => sockets.push(socket))
    const image = await fixture('small.png')
    const running = await abandonable(server.url, image)
    await waitFor(() => model.runs === 1, 'the request to reach the model')
    const waiting = postParts(server.url, KEY, REMOVE, removeParts(image))
    await waitFor(async () => (await readiness(server!.url)).queued === 1, 'a second request to queue')

    // Abandoned while the model runs; the run ends, and the step after it (refining) does not begin.
    running.abandon()
    // The first connection is the abandoned request's: once the server has seen it close, let the run end.
    await waitFor(() => sockets[0]?.destroyed, 'the server to see the connection close')
    await new Promise((r) => setTimeout(r, 50))
    model.open()
    const next = await collectFrames(await waiting)
    expect(next.done).toBeDefined()
    expect(next.stages).toEqual(['segmenting', 'refining', 'rendering'])
    expect(await readiness(server.url)).toMatchObject({ running: 0, queued: 0, dropped: 0, stopped: 1 })
  })

  it("stops high's close-ups at the next one: the run in flight ends, no further run begins", async () => {
    const model = gatedSegmenter({ value: 128, ungated: 1 })
    server = await startServer(createApp({ signingKey: KEY, model: { current: model.segmenter } }), { port: 0 })
    const sockets: Socket[] = []
    ;(server.server as Server).on('connection', (socket: Socket) => sockets.push(socket))
    // 3072×2048 against a 1024² model: three times closer, a grid of close-ups over the whole frame.
    const image = await sharp({ create: { width: 3072, height: 2048, channels: 3, background: '#808080' } })
      .png()
      .toBuffer()
    const running = await abandonable(server.url, image, { ...MASK_OPTIONS, quality: 'high' })
    await waitFor(() => model.runs === 2, "high's second model run (its mirrored view) to begin")
    running.abandon()
    await waitFor(() => sockets[0]?.destroyed, 'the server to see the connection close')
    model.open()
    await waitFor(async () => (await readiness(server!.url)).stopped === 1, 'the work to stop')
    expect(model.runs, 'the base run and the run in flight, nothing after').toBe(2)
    expect(await readiness(server.url)).toMatchObject({ running: 0, queued: 0, dropped: 0 })
  })

  it('counts the normal end of work as neither dropped nor stopped', async () => {
    const model = gatedSegmenter()
    model.open()
    server = await startServer(createApp({ signingKey: KEY, model: { current: model.segmenter } }), { port: 0 })
    const answer = await collectFrames(
      await postParts(server.url, KEY, REMOVE, removeParts(await fixture('small.png'))),
    )
    expect(answer.outputs).toHaveLength(1)
    expect(await readiness(server.url)).toMatchObject({ running: 0, queued: 0, dropped: 0, stopped: 0 })
  })
})
