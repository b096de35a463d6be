/**
 * Request bodies (docs/decisions.md, "Request bodies: drained refusals and the JSON cap"): a JSON
 * body over 1 MiB is 413 before it is parsed, whether its size is declared or only counted; and
 * whatever answers a request, its body has been read to its end (dropped) before the answer
 * leaves, up to the largest body any operation takes. That a refused body then leaves the
 * connection usable under `wrangler dev` is test/e2e/early-refusals.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { MAX_JSON_BODY_BYTES } from '../../src/contract/limits'
import { MAX_DRAINED_BYTES } from '../../src/middleware/request-body'
import { api, expectProblem, seedWorkspace } from './helpers'

const MiB = 1024 * 1024
const encoder = new TextEncoder()

/** A create-key body of exactly `size` bytes: a valid name padded with JSON whitespace. */
function keyBody(size: number): Uint8Array {
  const head = '{"name":"padded"'
  return encoder.encode(`${head}${' '.repeat(size - head.length - 1)}}`)
}

/** `bytes` as a stream of `chunk`-sized pieces with no declared length (sent chunked); counts what was pulled. */
function streamOf(bytes: Uint8Array, chunk = 64 * 1024) {
  const counter = { pulled: 0 }
  let offset = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close()
      const piece = bytes.subarray(offset, offset + chunk)
      offset += piece.byteLength
      counter.pulled += piece.byteLength
      controller.enqueue(piece)
    },
  })
  return { body, counter }
}

/** `count` chunks of `size` zero bytes after `head`, as a stream that counts what was pulled. */
function zerosAfter(head: Uint8Array, count: number, size = 4 * MiB) {
  const zeros = new Uint8Array(size)
  const counter = { pulled: 0 }
  let sent = -1
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = sent < 0 ? head : zeros
      if (++sent > count) return controller.close()
      counter.pulled += piece.byteLength
      controller.enqueue(piece)
    },
  })
  return { body, counter, total: head.byteLength + count * size }
}

const createKey = (key: string, body: BodyInit, headers: Record<string, string> = {}) =>
  api('/v1/api-keys', { method: 'POST', key, body, headers: { 'content-type': 'application/json', ...headers } })

describe('the JSON body cap', () => {
  it('a JSON body over 1 MiB by its Content-Length is 413 request_too_large before it is parsed', async () => {
    const { key } = await seedWorkspace()
    const over = keyBody(MAX_JSON_BODY_BYTES + 1)
    const res = await createKey(key, over, { 'content-length': String(over.byteLength) })
    // The request is over its limit, not an image: its own code, not `image_too_large`.
    const problem = await expectProblem(res, 413, 'request_too_large')
    expect(problem.title).toBe('Request too large')
    expect(problem.detail).toBe('Expected a JSON body of at most 1048576 bytes (1 MiB)')
    // Not parsed: a body over the cap that is not even JSON is refused for its size, not its syntax.
    const junk = encoder.encode('x'.repeat(2 * MiB))
    await expectProblem(
      await createKey(key, junk, { 'content-length': String(junk.byteLength) }),
      413,
      'request_too_large',
    )
  })

  it('a chunked JSON body (no Content-Length) is 413 once it passes 1 MiB, and is not parsed', async () => {
    const { key } = await seedWorkspace()
    await expectProblem(await createKey(key, streamOf(keyBody(MAX_JSON_BODY_BYTES + 1)).body), 413, 'request_too_large')
    await expectProblem(
      await createKey(key, streamOf(encoder.encode('x'.repeat(3 * MiB))).body),
      413,
      'request_too_large',
    )
  })

  it('a JSON body of exactly 1 MiB is processed as usual, declared or chunked', async () => {
    const { key } = await seedWorkspace()
    const body = keyBody(MAX_JSON_BODY_BYTES)
    const declared = await createKey(key, body, { 'content-length': String(body.byteLength) })
    expect(declared.status).toBe(201)
    expect(await declared.json()).toMatchObject({ name: 'padded' })
    const chunked = await createKey(key, streamOf(body).body)
    expect(chunked.status).toBe(201)
    // Under the cap the route's own checks still speak: a name too long is 400 naming it.
    const long = encoder.encode(JSON.stringify({ name: 'a'.repeat(MAX_JSON_BODY_BYTES - 20) }))
    await expectProblem(await createKey(key, streamOf(long).body), 400, 'invalid_input', 'name')
  })
})

describe('refused bodies are read to their end', () => {
  const BOUNDARY = 'drain-boundary'
  const unknownPart = encoder.encode(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="foo"\r\n\r\nbar\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n`,
  )
  const multipart = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }

  it('a body refused at its first part, or before it was looked at, is read to its end before the answer', async () => {
    const { key } = await seedWorkspace()
    const refused = zerosAfter(unknownPart, 5)
    const res = await api('/v1/removals', {
      method: 'POST',
      key,
      body: refused.body,
      headers: { ...multipart, 'idempotency-key': crypto.randomUUID() },
    })
    await expectProblem(res, 400, 'invalid_input', 'foo')
    expect(refused.counter.pulled).toBe(refused.total)
    // 401 before any route reads it; a path no route knows.
    for (const [path, status, code] of [
      ['/v1/virtual-try-ons', 401, 'invalid_api_key'],
      ['/v1/no-such-thing', 404, 'route_not_found'],
    ] as const) {
      const unread = zerosAfter(unknownPart, 3)
      await expectProblem(await api(path, { method: 'POST', body: unread.body, headers: multipart }), status, code)
      expect(unread.counter.pulled).toBe(unread.total)
    }
  })

  it('past the largest body any operation takes, the rest is not read', async () => {
    const { key } = await seedWorkspace()
    const chunks = Math.ceil(MAX_DRAINED_BYTES / (4 * MiB)) + 8
    const huge = zerosAfter(unknownPart, chunks)
    const res = await api('/v1/removals', {
      method: 'POST',
      key,
      body: huge.body,
      headers: { ...multipart, 'idempotency-key': crypto.randomUUID() },
    })
    await expectProblem(res, 400, 'invalid_input', 'foo')
    expect(huge.counter.pulled).toBeGreaterThan(MAX_DRAINED_BYTES)
    expect(huge.counter.pulled).toBeLessThan(MAX_DRAINED_BYTES + 12 * MiB)
    expect(huge.total).toBeGreaterThan(MAX_DRAINED_BYTES + 30 * MiB)
  })
})
