/**
 * Follows a job's server-sent events (SPEC.md §6) with the SDK's reader (sdk/src/sse.ts). Read
 * with fetch rather than EventSource: EventSource cannot send the session's Authorization header.
 * A dropped stream is resumed with `Last-Event-ID`; if that keeps failing the job is read once to
 * reconcile, as §6 asks. The terminal event says how the job ended, so the job is not read again
 * after it: an anonymous visitor's requests are few (30 a minute), and an image takes three
 * (removal, events, result). Unlike the SDK's `waitForJob`, which reads the job at the end.
 */
import { readSse } from '../../sdk/src/sse'
import { isTerminalStatus } from '../../sdk/src/wait'
import { type Job, request, requestJson } from './api'

export interface JobEvent {
  id: string
  type: string
  data: { jobId: string; status?: Job['status']; stage?: string; error?: { code: string; message: string } }
}

const MAX_RECONNECTS = 3

/** How a job ended: its status and, when it did not succeed, its error. */
export type JobEnd = Pick<Job, 'status' | 'error'>

/**
 * Calls `onEvent` per event until the job ends; resolves with how it ended, from its terminal
 * event, or as GET reports it when the stream could not tell.
 */
export async function followJob(id: string, anonymous: boolean, onEvent: (e: JobEvent) => void): Promise<JobEnd> {
  let lastId: string | undefined
  let end: JobEnd | undefined
  let ended = false
  for (let attempt = 0; attempt <= MAX_RECONNECTS && !ended; attempt++) {
    try {
      const res = await request(`/v1/jobs/${id}/events`, {
        anonymous,
        headers: { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
      })
      for await (const event of readEvents(res)) {
        lastId = event.id
        onEvent(event)
        const status = event.data.status
        if (status && isTerminalStatus(status)) {
          ended = true
          end = { status, error: event.data.error ?? null }
        }
      }
      // The server closes the stream once the job is terminal.
      ended = true
    } catch {
      await new Promise((r) => setTimeout(r, 500 * (attempt + 1)))
    }
  }
  return end ?? requestJson<Job>(`/v1/jobs/${id}`, { anonymous })
}

/** The stream's events whose data is the JSON envelope (§6); comments and keep-alives are skipped. */
export async function* readEvents<T = JobEvent>(res: Response): AsyncGenerator<T> {
  if (!res.body) return
  for await (const event of readSse(res.body)) {
    try {
      yield JSON.parse(event.data) as T
    } catch {
      // not an envelope: nothing to act on
    }
  }
}
