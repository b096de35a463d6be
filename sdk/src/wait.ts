/**
 * @module
 * `waitForJob`: follows GET /v1/jobs/{id}/events (which replays the job's events and ends when it
 * is terminal) and reads the job again at the end, because the stream only says that something
 * happened. When the stream cannot be opened or breaks off, it polls GET /v1/jobs/{id}, slowly
 * backing off, until the job ends or the time is up.
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
export const isTerminal = (job: Job) => TERMINAL.has(job.status)

export async function waitForJob(cutout: Cutout, id: string, options: WaitOptions = {}): Promise<Job> {
  const deadline = AbortSignal.timeout(options.timeoutMs ?? 600_000)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    let job = await cutout.getJob(id, signal)
    if (isTerminal(job) || options.poll) return isTerminal(job) ? job : await poll(cutout, id, signal)
    if (await followEvents(cutout, id, signal, options.onEvent)) {
      job = await cutout.getJob(id, signal)
      if (isTerminal(job)) return job
    }
    return await poll(cutout, id, signal)
  } catch (err) {
    if (deadline.aborted && !options.signal?.aborted) {
      throw new CutoutProblem(408, { code: 'timeout', detail: `job ${id} did not end in time`, retryable: true })
    }
    throw err
  }
}

/** Reads the stream to its end; false when it could not be used at all. */
async function followEvents(
  cutout: Cutout,
  id: string,
  signal: AbortSignal,
  onEvent: WaitOptions['onEvent'],
): Promise<boolean> {
  let res: Response
  try {
    const request = new Request(`${cutout.baseUrl}/v1/jobs/${id}/events`, {
      headers: { accept: 'text/event-stream' },
      signal,
    })
    res = await cutout.send(request)
  } catch (err) {
    if (signal.aborted) throw err
    return false
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined)
    return false
  }
  try {
    for await (const event of readSse(res.body)) {
      onEvent?.({ type: event.event, data: safeJson(event.data) })
    }
    return true
  } catch (err) {
    if (signal.aborted) throw err
    return false // broken off: the poll takes over
  }
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
