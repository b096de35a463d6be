/**
 * `waitForJob` against a small event-stream server on 127.0.0.1: a stream that breaks off is
 * resumed with `Last-Event-ID` (SPEC.md §6), `onEvent` hears every event once, and after a gap
 * the job is read again with GET; reconnects are bounded.
 */
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Cutout, followEvents, type SseEvent } from '@cutout/sdk'
import { afterEach, describe, expect, it } from 'vitest'

const JOB = '11111111-1111-4111-8111-111111111111'

interface Fake {
  cutout: Cutout
  /** The Last-Event-ID of each events request ('' when none). */
  resumedFrom: string[]
  jobReads: number
}

let server: Server | undefined
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())))

/** `stream(n, res, fake)` answers the n-th events request (0-based); `status()` is the job's. */
async function start(stream: (n: number, res: ServerResponse) => void, status: () => string): Promise<Fake> {
  const fake = { resumedFrom: [] as string[], jobReads: 0 } as Fake
  server = createServer((req, res) => {
    if (req.url === `/v1/jobs/${JOB}/events`) {
      fake.resumedFrom.push(String(req.headers['last-event-id'] ?? ''))
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.flushHeaders()
      return stream(fake.resumedFrom.length - 1, res)
    }
    if (req.url === `/v1/jobs/${JOB}`) {
      fake.jobReads++
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ id: JOB, status: status(), stage: 'queued', createdAt: '', updatedAt: '' }))
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const baseUrl = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`
  fake.cutout = new Cutout({ baseUrl, apiKey: 'k', retry: { baseDelayMs: 1 } })
  return fake
}

const event = (id: string, type: string, status: string) =>
  `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ id, type, data: { jobId: JOB, status } })}\n\n`

/** Writes, then breaks the connection off (no clean end of the chunked body). */
const breakOff = (res: ServerResponse, text = '') => {
  if (text) res.write(text)
  setTimeout(() => res.socket?.destroy(), 50)
}

describe('waitForJob over a stream that breaks off', () => {
  it('reconnects with Last-Event-ID and keeps telling onEvent, then reads the job once', async () => {
    let status = 'processing'
    const fake = await start(
      (n, res) => {
        if (n === 0) return breakOff(res, event('e1', 'image.job.progress.v1', 'processing'))
        status = 'succeeded'
        res.end(event('e2', 'image.job.completed.v1', 'succeeded'))
      },
      () => status,
    )
    const seen: string[] = []
    const job = await fake.cutout.waitForJob(JOB, { timeoutMs: 8000, onEvent: (e) => seen.push(e.type) })
    expect(job.status).toBe('succeeded')
    expect(seen).toEqual(['image.job.progress.v1', 'image.job.completed.v1'])
    expect(fake.resumedFrom).toEqual(['', 'e1'])
    expect(fake.jobReads).toBe(2) // before the stream, and once after it ended
  })

  it('gives up on a stream that keeps breaking after a few tries and reconciles with GET', async () => {
    let reads = 0
    const fake = await start(
      (_, res) => breakOff(res),
      () => (++reads >= 3 ? 'succeeded' : 'processing'),
    )
    const job = await fake.cutout.waitForJob(JOB, { timeoutMs: 15_000 })
    expect(job.status).toBe('succeeded')
    expect(fake.resumedFrom.length).toBeGreaterThan(1)
    expect(fake.resumedFrom.length).toBeLessThanOrEqual(4)
  })
})

describe('followEvents over any transport', () => {
  it('resumes with Last-Event-ID through the caller’s own open, and asks `ended` after a clean end', async () => {
    let ending = false
    const fake = await start(
      (n, res) => {
        if (n === 0) return breakOff(res, event('e1', 'image.job.progress.v1', 'processing'))
        if (n === 1) return res.end(event('e2', 'image.job.progress.v1', 'processing'))
        ending = true
        res.end(event('e3', 'image.job.completed.v1', 'succeeded'))
      },
      () => 'processing',
    )
    const seen: SseEvent[] = []
    const asked: boolean[] = []
    const ended = await followEvents(
      async (lastEventId, signal) => {
        const headers: Record<string, string> = lastEventId ? { 'last-event-id': lastEventId } : {}
        const res = await fetch(`${fake.cutout.baseUrl}/v1/jobs/${JOB}/events`, { headers, signal })
        return res.body ?? undefined
      },
      {
        onEvent: (e) => seen.push(e),
        ended: () => {
          asked.push(ending)
          return ending
        },
      },
    )
    expect(ended).toBe(true)
    expect(seen.map((e) => [e.id, e.event])).toEqual([
      ['e1', 'image.job.progress.v1'],
      ['e2', 'image.job.progress.v1'],
      ['e3', 'image.job.completed.v1'],
    ])
    expect(fake.resumedFrom).toEqual(['', 'e1', 'e2'])
    // Asked after each clean end only (the first stream broke off), and no job was read.
    expect(asked).toEqual([false, true])
    expect(fake.jobReads).toBe(0)
  })

  it('follows a stream without an end (reconnects: Infinity) past any number of closes and failed opens, until one says it is gone', async () => {
    const fake = await start(
      (n, res) => {
        if (n === 0) return res.end(event('e1', 'image.refinement.completed.v1', 'succeeded'))
        if (n === 5) return breakOff(res, event('e2', 'image.refinement.completed.v1', 'succeeded'))
        res.end() // closed without an event (a proxy's idle cut)
      },
      () => 'processing',
    )
    const seen: (string | undefined)[] = []
    let opens = 0
    const ended = await followEvents(
      async (lastEventId, signal) => {
        opens++
        if (opens === 3) throw new TypeError('Failed to fetch') // not opened this time: tried again
        if (opens === 9) return undefined // gone (a deleted project's 404): asking again cannot help
        const headers: Record<string, string> = lastEventId ? { 'last-event-id': lastEventId } : {}
        const res = await fetch(`${fake.cutout.baseUrl}/v1/jobs/${JOB}/events`, { headers, signal })
        return res.body ?? undefined
      },
      { reconnects: Number.POSITIVE_INFINITY, ended: () => false, baseDelayMs: 5, onEvent: (e) => seen.push(e.id) },
    )
    expect(ended).toBe(false)
    expect(seen).toEqual(['e1', 'e2'])
    // Five opens in a row brought nothing new (more than the default three), yet it kept on, each after e1.
    expect(fake.resumedFrom).toEqual(['', 'e1', 'e1', 'e1', 'e1', 'e1', 'e2'])
    expect(opens).toBe(9)
  })

  it('stops waiting to reopen once its signal aborts', async () => {
    const controller = new AbortController()
    const following = followEvents(async () => new Response('').body ?? undefined, {
      signal: controller.signal,
      reconnects: Number.POSITIVE_INFINITY,
      ended: () => false,
      baseDelayMs: 60_000,
    })
    setTimeout(() => controller.abort(new Error('left the editor')), 20)
    await expect(following).rejects.toThrow('left the editor')
  })

  it('is false when the stream cannot be opened, so the caller reconciles', async () => {
    expect(await followEvents(async () => undefined)).toBe(false)
  })
})
