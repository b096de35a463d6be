/**
 * Follows a job's server-sent events (SPEC.md §6) with the SDK's reader (sdk/src/sse.ts). Read
 * with fetch rather than EventSource: EventSource cannot send the session's Authorization header.
 * A dropped stream is resumed with `Last-Event-ID`; if that keeps failing the job is read once to
 * reconcile, as §6 asks. The terminal event says how the job ended, so the job is not read again
 * after it: an anonymous visitor's requests are few (30 a minute), and an image takes three
 * (removal, events, result). Unlike the SDK's `waitForJob`, which reads the job at the end.
 */
import { followEvents, isTerminalStatus } from '../../sdk/src/wait'
import { type Job, request, requestJson } from './api'

export interface JobEvent {
  id: string
  type: string
  data: {
    jobId: string
    status?: Job['status']
    stage?: string
    error?: { code: string; message: string }
    /** On `image.job.completed.v1`: the job's warnings and a removal's mask confidence. */
    warnings?: Job['warnings']
    confidence?: number
  }
}

/** How often a job is read when its stream could not be followed (few reads: anonymous visitors have 30 a minute). */
const RECONCILE_POLL_MS = 3000

/**
 * How a job ended: its status and, when it did not succeed, its error; when it did, its warnings
 * and (a removal's) mask confidence, as the completed event or the job itself says them.
 */
export type JobEnd = Pick<Job, 'status' | 'error'> & { warnings?: Job['warnings']; confidence?: number }

/** A job as read, as the end it reached. */
export const endOf = (job: Job): JobEnd => ({
  status: job.status,
  error: job.error,
  warnings: job.warnings,
  confidence: job.result?.confidence,
})

/**
 * Calls `onEvent` per event until the job ends; resolves with how it ended, from its terminal
 * event, or as GET reports it when the stream could not tell. The reopening after `Last-Event-ID`
 * is the SDK's `followEvents`; a clean end of the stream without a terminal event is read as the
 * job's end only after one reconciling GET.
 */
export async function followJob(id: string, anonymous: boolean, onEvent: (e: JobEvent) => void): Promise<JobEnd> {
  let end: JobEnd | undefined
  const open = async (lastEventId: string | undefined) => {
    try {
      const res = await request(`/v1/jobs/${id}/events`, {
        anonymous,
        headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      })
      return res.body ?? undefined
    } catch {
      return undefined
    }
  }
  await followEvents(open, {
    onEvent: (sse) => {
      const event = envelope<JobEvent>(sse.data)
      if (!event) return
      onEvent(event)
      const status = event.data.status
      if (status && isTerminalStatus(status))
        end = {
          status,
          error: event.data.error ?? null,
          warnings: event.data.warnings,
          confidence: event.data.confidence,
        }
    },
    // The server closes the stream once the job is terminal.
    ended: () => true,
  })
  return end ?? reconcile(id, anonymous)
}

/** The stream could not tell how the job ended: read it, and again now and then while it still runs. */
async function reconcile(id: string, anonymous: boolean): Promise<JobEnd> {
  for (;;) {
    const job = await requestJson<Job>(`/v1/jobs/${id}`, { anonymous })
    if (isTerminalStatus(job.status)) return endOf(job)
    await new Promise((r) => setTimeout(r, RECONCILE_POLL_MS))
  }
}

/** An event's data as the JSON envelope (§6), or undefined when it is not one (a keep-alive). */
export function envelope<T>(data: string): T | undefined {
  try {
    return JSON.parse(data) as T
  } catch {
    return undefined
  }
}
