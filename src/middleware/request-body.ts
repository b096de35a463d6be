/**
 * @module
 * What every request's body goes through before a route sees it (docs/decisions.md, "Request
 * bodies: drained refusals and the JSON cap"):
 *
 * - {@link drainUnreadBody}: whatever answer a request gets, its body has been read to the end
 *   before the answer leaves, so a refusal part-way through a body (an unknown multipart part, an
 *   image that is not one, a 401 before the body was looked at) leaves the connection and the
 *   server as they were. Under `wrangler dev` a body left unread (or canceled) part-way stalls the
 *   next request to the server, from anyone; canceling it and `Connection: close` do not help there.
 * - {@link jsonBodyLimit}: a JSON body over {@link MAX_JSON_BODY_BYTES} is 413 before it is read:
 *   by its Content-Length, or by counting as it arrives when it has none.
 */
import { createMiddleware } from 'hono/factory'
import { MAX_REFERENCES } from '../contract/catalog-limits'
import { MAX_IMAGE_BYTES, MAX_JSON_BODY_BYTES } from '../contract/limits'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { concatBytes } from '../lib/bytes'

/**
 * The most of a refused body read to its end: the largest body any operation takes (four catalog
 * references of 50 MB, with room for the text parts). Past it the sender is no client of ours and
 * the rest is canceled.
 */
export const MAX_DRAINED_BYTES = MAX_REFERENCES * MAX_IMAGE_BYTES + 1024 * 1024

/**
 * Puts a stream the middleware owns between the request's body and the routes: a route may read
 * it, stop part-way, cancel it or leave it locked, and the rest of the body is still read here
 * (and dropped, up to {@link MAX_DRAINED_BYTES}) once the route has answered, before the answer
 * leaves. Registered first, so it sees every answer, errors and 404s included.
 */
export const drainUnreadBody = () =>
  createMiddleware<AppEnv>(async function drainUnreadBody(c, next) {
    const original = c.req.raw.body
    if (!original) return next()
    const source = serialReads(original.getReader())
    let ended = false
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const read = await source.read()
        if (read.done) {
          ended = true
          controller.close()
          return
        }
        try {
          controller.enqueue(read.value)
        } catch {
          // The route canceled this stream while the read was under way: the chunk is dropped.
        }
      },
      // A reader that stops early leaves the rest to `drain` below, which still owns `source`.
      cancel() {},
    })
    c.req.raw = new Request(c.req.raw, { body })
    try {
      await next()
    } finally {
      if (!ended) await drain(source)
    }
  })

/**
 * `reader` whose reads wait their turn: the runtime's body stream takes one pending read at a
 * time, and the stream above may still be pulling ahead when the route has answered.
 */
function serialReads(reader: ReadableStreamDefaultReader<Uint8Array>): Pick<typeof reader, 'read' | 'cancel'> {
  let last: Promise<unknown> = Promise.resolve()
  return {
    read() {
      const next = last.then(() => reader.read())
      last = next.catch(() => undefined)
      return next
    },
    cancel: (reason) => reader.cancel(reason),
  }
}

/** Reads `source` to its end, dropping the bytes; cancels it past {@link MAX_DRAINED_BYTES}. A failed read ends it. */
async function drain(source: Pick<ReadableStreamDefaultReader<Uint8Array>, 'read' | 'cancel'>): Promise<void> {
  let drained = 0
  try {
    for (;;) {
      const read = await source.read()
      if (read.done) return
      drained += read.value.byteLength
      if (drained > MAX_DRAINED_BYTES) break
    }
  } catch {
    // The sender went away or the body was malformed: there is nothing left to read.
    return
  }
  await source.cancel().catch(() => undefined)
}

/** `application/json` and the `+json` types (`application/merge-patch+json`), as zod-openapi reads them. */
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i

const tooLarge = () =>
  new ApiError('request_too_large', `Expected a JSON body of at most ${MAX_JSON_BODY_BYTES} bytes (1 MiB)`)

/**
 * Refuses a JSON body over {@link MAX_JSON_BODY_BYTES} with 413 before it is parsed: at once by
 * its Content-Length, else (a chunked body) as soon as the bytes read pass the limit; a body
 * under it is handed on whole. Other media types are left to their routes.
 */
export const jsonBodyLimit = () =>
  createMiddleware<AppEnv>(async function jsonBodyLimit(c, next) {
    const body = c.req.raw.body
    if (!body || !JSON_TYPE.test(c.req.header('content-type') ?? '')) return next()
    const declared = c.req.header('content-length')
    if (declared !== undefined) {
      // The runtime holds a body to its Content-Length, so a length within the limit needs no count.
      if (Number(declared) > MAX_JSON_BODY_BYTES) throw tooLarge()
      return next()
    }
    const bytes = await readAtMost(body, MAX_JSON_BODY_BYTES)
    if (!bytes) throw tooLarge()
    c.req.raw = new Request(c.req.raw, { body: bytes })
    return next()
  })

/** The whole of `body` when it is at most `limit` bytes, else null as soon as it passes them. */
async function readAtMost(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | null> {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const read = await reader.read()
      if (read.done) break
      size += read.value.byteLength
      if (size > limit) return null
      chunks.push(read.value)
    }
  } catch (cause) {
    throw new ApiError('invalid_input', 'The request body could not be read to its end', { cause })
  } finally {
    reader.releaseLock()
  }
  return concatBytes(chunks, size)
}
