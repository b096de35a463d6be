/**
 * @module
 * `waitForJob`: follows GET /v1/jobs/{id}/events (which replays the job's events and ends when it
 * is terminal) and reads the job again at the end, because the stream only says that something
 * happened. A stream that breaks off is reopened with `Last-Event-ID`, so it resumes after the last
 * event seen (SPEC.md §6), up to `MAX_RECONNECTS` times in a row without a new event. When it
 * cannot be opened or keeps breaking, the job is read again (the reconciliation §6 asks for after
 * a gap) and then polled, slowly backing off, until the job ends or the time is up.
 * `followEvents` is that resuming reader on its own, over any transport and for streams without
 * an end too (a project's, which the editor follows while it is open).
 */
import type { Cutout, Job } from './client.js'
import { TERMINAL_STATUSES, type TerminalStatus } from './contract.js'
import { CutoutProblem } from './problem.js'
import { backoffMs, sleep } from './retry.js'
import { readSse, type SseEvent } from './sse.js'

export interface WaitOptions {
  signal?: AbortSignal
  /** Give up after this long (ms). Default 10 minutes. */
  timeoutMs?: number
  /** Told of every event on the stream (stage changes, completion). */
  onEvent?: (event: { type: string; data: unknown }) => void
  /** Skip the stream and poll (e.g. behind proxies that buffer event streams). */
  poll?: boolean
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES)
/** Whether a job in this status has ended (it never changes again). */
export const isTerminalStatus = (status: string): status is TerminalStatus => TERMINAL.has(status)
export const isTerminal = (job: Pick<Job, 'status'>) => isTerminalStatus(job.status)

/** Reopenings of a stream that broke off, in a row without a new event, before giving up on it. */
const MAX_RECONNECTS = 3

export async function waitForJob(cutout: Cutout, id: string, options: WaitOptions = {}): Promise<Job> {
  const deadline = AbortSignal.timeout(options.timeoutMs ?? 600_000)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    const job = await cutout.getJob(id, signal)
    if (isTerminal(job)) return job
    if (!options.poll) {
      const ended = await followJob(cutout, id, signal, options.onEvent)
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
 * Opens an event stream after `lastEventId` (none: from the start): its body, or undefined when it
 * cannot be opened (the resource is gone, or access refused: reopening would not help). A throw is
 * a failure to try again, counted as a break, unless `signal` is aborted.
 */
export type OpenEvents = (
  lastEventId: string | undefined,
  signal: AbortSignal,
) => Promise<ReadableStream<Uint8Array> | undefined>

export interface FollowOptions {
  signal?: AbortSignal
  /** Told of every event, once, in order, across reopenings. */
  onEvent?: (event: SseEvent) => void
  /**
   * Asked when a stream ends cleanly: true when there is nothing more to wait for (a job's stream
   * ends once the job is terminal), false to reopen it. Without it a clean end is the end.
   */
  ended?: () => boolean | Promise<boolean>
  /**
   * Reopenings in a row without a new event before giving up. Default 3 (`MAX_RECONNECTS`);
   * `Infinity` follows a stream that has no end (a project's) until `signal` aborts.
   */
  reconnects?: number
  /** The first reopening's wait ceiling in ms, doubling per failure in a row. Default 1000. */
  baseDelayMs?: number
  /** The longest wait before a reopening, in ms. Default 10 000. */
  maxDelayMs?: number
}

/**
 * Reads an event stream to its end, reopening it with `Last-Event-ID` after the last event seen
 * when it breaks off (or ends before `ended` agrees), so it resumes where it stopped (SPEC.md §6),
 * after a backoff, up to `reconnects` times in a row without a new event. True once it ended;
 * false when the stream could not be opened or kept breaking, and the caller should reconcile
 * (read the state again) instead. Any transport works: `open` decides how the stream is requested.
 */
export async function followEvents(open: OpenEvents, options: FollowOptions = {}): Promise<boolean> {
  const signal = options.signal ?? new AbortController().signal
  const { reconnects = MAX_RECONNECTS, baseDelayMs = 1000, maxDelayMs = 10_000 } = options
  let lastEventId: string | undefined
  for (let failures = 0; failures <= reconnects; ) {
    // Full jitter, so the many pages a server restart cut off do not all come back at once.
    if (failures) await sleep(backoffMs(failures - 1, baseDelayMs, maxDelayMs), signal)
    const before = lastEventId
    try {
      const body = await open(lastEventId, signal)
      if (!body) return false
      for await (const event of readSse(body)) {
        if (event.id) lastEventId = event.id
        options.onEvent?.(event)
      }
      if (!options.ended || (await options.ended())) return true
    } catch (err) {
      if (signal.aborted) throw err
      // Broken off, or not opened this time: resume after the last event seen.
    }
    failures = lastEventId !== before ? 1 : failures + 1
  }
  return false
}

/**
 * Follows the job's stream (the server ends it once the job is terminal, and the job is read then,
 * since the stream only says that something happened), then reads the job. The job when that read
 * finds it terminal, else undefined.
 */
async function followJob(
  cutout: Cutout,
  id: string,
  signal: AbortSignal,
  onEvent: WaitOptions['onEvent'],
): Promise<Job | undefined> {
  let job: Job | undefined
  const ended = await followEvents((lastEventId) => openEvents(cutout, id, signal, lastEventId), {
    signal,
    onEvent: onEvent && ((event) => onEvent({ type: event.event, data: safeJson(event.data) })),
    ended: async () => {
      job = await cutout.getJob(id, signal)
      return isTerminal(job)
    },
  })
  if (ended && job) return job
  job = await cutout.getJob(id, signal)
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
