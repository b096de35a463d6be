/**
 * Follows a job's server-sent events (SPEC.md §6). Read with fetch rather than EventSource:
 * EventSource cannot send the session's Authorization header. A dropped stream is resumed with
 * `Last-Event-ID`; if that keeps failing the job is read once to reconcile, as §6 asks. The
 * terminal event says how the job ended, so the job is not read again after it: an anonymous
 * visitor's requests are few (30 a minute), and an image takes three (removal, events, result).
 */
import { type Job, request, requestJson } from './api'

export interface JobEvent {
  id: string
  type: string
  data: { jobId: string; status?: string; stage?: string; error?: { code: string; message: string } }
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled'])
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
        if (event.data.status && TERMINAL.has(event.data.status)) {
          ended = true
          end = { status: event.data.status as Job['status'], error: event.data.error ?? null }
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

async function* readEvents(res: Response): AsyncGenerator<JobEvent> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value.replace(/\r\n?/g, '\n')
    let end = buffer.indexOf('\n\n')
    while (end >= 0) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const event = parseFrame(frame)
      if (event) yield event
      end = buffer.indexOf('\n\n')
    }
  }
}

function parseFrame(frame: string): JobEvent | null {
  let data = ''
  for (const line of frame.split('\n')) {
    if (line.startsWith('data:')) data += line.slice(5).trimStart()
  }
  if (!data) return null // a comment or keep-alive
  try {
    return JSON.parse(data) as JobEvent
  } catch {
    return null
  }
}
