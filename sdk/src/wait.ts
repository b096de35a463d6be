/**
 * @module
 * `waitForJob`: follows GET /v1/jobs/{id}/events (which replays the job's events and ends when it
 * is terminal) and reads the job again at the end, because the stream only says that something
 * happened. A stream that breaks off is reopened with `Last-Event-ID`, so it resumes after the last
 * event seen (SPEC.md §6), up to `MAX_RECONNECTS` times in a row without a new event. When it
 * cannot be opened or keeps breaking, the job is read again (the reconciliation §6 asks for after
 * a gap) and then polled, slowly backing off, until the job ends or the time is up.
 */
import type { Cutout, Job } from './client.js'
import { CutoutProblem } from './problem.js'
import { sleep } from './retry.js'
import { readSse } from './sse.js'

export interface WaitOptions {
  signal?: AbortSignal
  /** Give up after this long (ms). Default 10 minutes. */
  timeoutMs?: number
  /** Told of every event on the stream (stage changes, completion). */
  onEvent?: (event: { type: string; data: unknown }) => void
  /** Skip the stream and poll (e.g. behind proxies that buffer event streams). */
  poll?: boolean
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled'])
export const isTerminal = (job: Pick<Job, 'status'>) => TERMINAL.has(job.status)

/** Reopenings of a stream that broke off, in a row without a new event, before polling instead. */
const MAX_RECONNECTS = 3

export async function waitForJob(cutout: Cutout, id: string, options: WaitOptions = {}): Promise<Job> {
  const deadline = AbortSignal.timeout(options.timeoutMs ?? 600_000)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    const job = await cutout.getJob(id, signal)
    if (isTerminal(job)) return job
    if (!options.poll) {
      const ended = await followEvents(cutout, id, signal, options.onEvent)
      if (ended) return ended
    }
    return await poll(cutout, id, signal)
  } catch (err) {
    if (deadline.aborted && !options.signal?.aborted) {
      throw new CutoutProblem(408, { code: 'timeout', detail: `job ${id} did not end in time`, retryable: true })
    }
    throw err
  }
}

/**
 * Follows the stream, reopening it after the last event id when it breaks off; after it ends (or
 * cannot be used any more) reads the job. The job when that read finds it terminal, else undefined.
 */
async function followEvents(
  cutout: Cutout,
  id: string,
  signal: AbortSignal,
  onEvent: WaitOptions['onEvent'],
): Promise<Job | undefined> {
  let lastEventId: string | undefined
  for (let failures = 0; failures <= MAX_RECONNECTS; ) {
    if (failures) await sleep(500 * failures, signal)
    const res = await openEvents(cutout, id, signal, lastEventId)
    if (!res) break
    const before = lastEventId
    try {
      for await (const event of readSse(res)) {
        if (event.id) lastEventId = event.id
        onEvent?.({ type: event.event, data: safeJson(event.data) })
      }
    } catch (err) {
      if (signal.aborted) throw err
      // Broken off: resume after the last event seen.
      failures = lastEventId !== before ? 1 : failures + 1
      continue
    }
    // The server ends the stream once the job is terminal; check, and resume if it is not yet.
    const job = await cutout.getJob(id, signal)
    if (isTerminal(job)) return job
    failures = lastEventId !== before ? 1 : failures + 1
  }
  const job = await cutout.getJob(id, signal)
  return isTerminal(job) ? job : undefined
}

/** The event stream's body, or undefined when it cannot be opened. */
async function openEvents(
  cutout: Cutout,
  id: string,
  signal: AbortSignal,
  lastEventId: string | undefined,
): Promise<ReadableStream<Uint8Array> | undefined> {
  const headers: Record<string, string> = { accept: 'text/event-stream' }
  if (lastEventId) headers['last-event-id'] = lastEventId
  let res: Response
  try {
    res = await cutout.send(new Request(`${cutout.baseUrl}/v1/jobs/${id}/events`, { headers, signal }))
  } catch (err) {
    if (signal.aborted) throw err
    return undefined
  }
  if (res.ok && res.body) return res.body
  await res.body?.cancel().catch(() => undefined)
  return undefined
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** GET the job every 1 s, growing to 5 s, until it ends (well inside the 120/min rate limit). */
async function poll(cutout: Cutout, id: string, signal: AbortSignal): Promise<Job> {
  for (let delay = 1000; ; delay = Math.min(5000, delay * 1.5)) {
    await sleep(delay, signal)
    const job = await cutout.getJob(id, signal)
    if (isTerminal(job)) return job
  }
}
