/**
 * @module
 * A small server-sent events reader over a fetch body (EventSource cannot send an
 * `Authorization` header). Yields each event's id, type and data as the stream delivers them.
 */

export interface SseEvent {
  id?: string
  event: string
  data: string
}

/** Parses `text/event-stream` (WHATWG HTML §9.2.6), ignoring comments and retry lines. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  let current: Partial<SseEvent> & { data?: string } = {}
  const reader = body.getReader()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let newline = buffer.search(/\r\n|\r|\n/)
      while (newline >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
        if (line === '') {
          if (current.data !== undefined)
            yield { id: current.id, event: current.event ?? 'message', data: current.data }
          current = {}
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':')
          const field = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
          if (field === 'data') current.data = current.data === undefined ? value : `${current.data}\n${value}`
          else if (field === 'event') current.event = value
          else if (field === 'id') current.id = value
        }
        newline = buffer.search(/\r\n|\r|\n/)
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}
