/**
 * @module
 * The SSE proxy (SPEC.md §6): a job's or a project's stream is served by its Durable Object; the
 * Worker passes `Last-Event-ID` on and hands the stream back.
 */

/** What a Durable Object stub offers for this: its `fetch`. */
interface StreamSource {
  fetch(url: string, init?: RequestInit): Promise<Response>
}

/** The object's event stream from after `lastEventId` (all of it without one). */
export async function proxyEventStream(
  source: StreamSource,
  url: string,
  lastEventId: string | undefined,
): Promise<Response> {
  const headers = new Headers()
  if (lastEventId) headers.set('last-event-id', lastEventId)
  const stream = await source.fetch(url, { headers })
  // A Durable Object's response has immutable headers; copy it so middleware can add its own.
  return new Response(stream.body, stream)
}
