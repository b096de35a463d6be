/**
 * Reading the API's event streams in tests with the SDK's own parser (sdk/src/sse.ts), so the
 * tests, the SDK and the page read `text/event-stream` one way: comments (keepalives) are skipped.
 */
import { readSse } from '../../sdk/src/sse'

/** An event as streamed: its id and type, and its data (the event envelope) parsed. */
export interface StreamedEvent {
  id: string
  event: string
  data: any
}

/** The stream's events as they come. */
export async function* sseEvents(res: Response): AsyncGenerator<StreamedEvent> {
  for await (const e of readSse(res.body!)) yield { id: e.id ?? '', event: e.event, data: JSON.parse(e.data) }
}

/** The first `count` events (all of them, until the stream ends, by default); the stream is then let go. */
export async function readEvents(res: Response, count = Number.POSITIVE_INFINITY): Promise<StreamedEvent[]> {
  const events: StreamedEvent[] = []
  if (count <= 0) return events
  for await (const e of sseEvents(res)) {
    events.push(e)
    if (events.length >= count) break
  }
  return events
}

/** Reads a live stream one event at a time: `next()` is the next event, or null once the stream ends. */
export function sseReader(res: Response): () => Promise<StreamedEvent | null> {
  const events = sseEvents(res)
  return async () => (await events.next()).value ?? null
}
