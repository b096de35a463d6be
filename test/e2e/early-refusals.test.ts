/**
 * A request refused before its body was read to the end must leave the connection and the server
 * as they were (issue 30 item 2; docs/decisions.md, "Request bodies: drained refusals and the JSON
 * cap"). Under `npm start` (`wrangler dev`) such a refusal used to stall the next request to the
 * server, on the same keep-alive connection and on a new one, from anyone, until yet another
 * request came. Each refusal here goes out on a keep-alive connection; then `/health/live` must be
 * answered on that same connection and on a new one. A client timeout is the failure signal.
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { Socket } from 'node:net'
import { beforeAll, describe, expect, it } from 'vitest'
import { e2eStack } from '../helpers/e2e-stack'
import type { SharedStack } from '../helpers/shared-stack'

/** Long enough for a busy machine to answer `/health/live`; a stalled server never does. */
const CLIENT_TIMEOUT_MS = 5_000
const PHOTO = readFileSync(new URL('../../examples/photo.jpg', import.meta.url))
const BOUNDARY = 'early-refusal-boundary'
const MiB = 1024 * 1024

const text = (name: string, value: string) =>
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
const file = (name: string, bytes: Buffer = PHOTO) =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="photo.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    ),
    bytes,
    Buffer.from('\r\n'),
  ])
const unnamed = (disposition: string) =>
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\nx\r\n`)
const form = (...parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)])
const OPTIONS = text(
  'options',
  JSON.stringify({ quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' }),
)
const TRY_ON_OPTIONS = text('options', '{}')

interface Refusal {
  name: string
  /** The path, or how to make it (an upload to PUT bytes to). */
  path: string | ((stack: SharedStack) => Promise<string>)
  method?: string
  body: Buffer | (() => Buffer[])
  contentType?: string
  /** Sent without the API key. */
  anonymous?: boolean
  status: number
  field?: string
}

/** The refusals of issue 30 item 2, and the JSON cap's (item 5) on the same connection. */
const REFUSALS: Refusal[] = [
  {
    name: 'an unknown part',
    path: '/v1/removals',
    body: form(text('foo', 'bar'), file('image'), OPTIONS),
    status: 400,
    field: 'foo',
  },
  {
    name: 'an unknown part, without a key',
    path: '/v1/removals',
    body: form(text('foo', 'bar'), file('image'), OPTIONS),
    anonymous: true,
    status: 400,
    field: 'foo',
  },
  {
    name: 'a second image',
    path: '/v1/removals',
    body: form(file('image'), file('image'), OPTIONS),
    status: 400,
    field: 'image',
  },
  {
    name: 'a second options',
    path: '/v1/removals',
    body: form(OPTIONS, OPTIONS, file('image')),
    status: 400,
    field: 'options',
  },
  {
    name: 'a fifth references part',
    path: '/v1/catalog-images',
    body: form(...Array.from({ length: 5 }, () => file('references'))),
    status: 400,
    field: 'references',
  },
  {
    name: 'a part named ""',
    path: '/v1/removals',
    body: form(unnamed('form-data; name=""'), file('image'), OPTIONS),
    status: 400,
    field: 'Content-Disposition',
  },
  {
    name: 'a part with no name',
    path: '/v1/removals',
    body: form(unnamed('form-data'), file('image'), OPTIONS),
    status: 400,
    field: 'Content-Disposition',
  },
  {
    name: 'an unlisted part on a try-on',
    path: '/v1/virtual-try-ons',
    body: form(text('foo', 'bar'), file('person'), file('garment'), TRY_ON_OPTIONS),
    status: 400,
    field: 'foo',
  },
  {
    name: '5000 unnamed parts',
    path: '/v1/removals',
    body: form(...Array.from({ length: 5000 }, () => unnamed('form-data')), file('image'), OPTIONS),
    status: 400,
    field: 'Content-Disposition',
  },
  {
    name: 'a 2 MiB JSON body (Content-Length)',
    path: '/v1/api-keys',
    body: Buffer.from(JSON.stringify({ name: 'a'.repeat(2 * MiB) })),
    contentType: 'application/json',
    status: 413,
  },
  {
    name: 'a 2 MiB JSON body (chunked)',
    path: '/v1/api-keys',
    body: () => [Buffer.from('{"name":"'), Buffer.alloc(2 * MiB, 'a'), Buffer.from('"}')],
    contentType: 'application/json',
    status: 413,
  },
  {
    name: 'upload bytes that are not an image',
    path: async ({ baseUrl, apiKey }) => {
      const res = await fetch(new URL('/v1/uploads', baseUrl), {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
      })
      return `/v1/uploads/${((await res.json()) as { id: string }).id}/content`
    },
    method: 'PUT',
    body: Buffer.alloc(3 * MiB, 1),
    contentType: 'application/octet-stream',
    status: 415,
  },
]

interface Answer {
  status: number
  body: string
  socket: Socket
  reused: boolean
}

/**
 * One request through `agent` (`false`: a new connection), its body sent with a Content-Length, or
 * chunked when given as pieces. Rejects when no whole answer came within CLIENT_TIMEOUT_MS.
 */
function send(
  url: URL,
  agent: http.Agent | false,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | (() => Buffer[]) } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? 'GET', agent, headers: init.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        clearTimeout(timer)
        resolve({
          status: res.statusCode!,
          body: Buffer.concat(chunks).toString(),
          socket: req.socket!,
          reused: req.reusedSocket,
        })
      })
    })
    const timer = setTimeout(
      () =>
        req.destroy(new Error(`no answer to ${init.method ?? 'GET'} ${url.pathname} within ${CLIENT_TIMEOUT_MS} ms`)),
      CLIENT_TIMEOUT_MS,
    )
    req.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    if (typeof init.body === 'function') {
      for (const piece of init.body()) req.write(piece)
      req.end()
    } else req.end(init.body)
  })
}

let stack: SharedStack

beforeAll(() => {
  stack = e2eStack()
})

describe('a refusal before the body was read leaves the connection and the server as they were', () => {
  for (const refusal of REFUSALS) {
    it(`${refusal.name}: ${refusal.status}, then /health/live on the same connection and on a new one`, async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      try {
        const headers: Record<string, string> = {
          'content-type': refusal.contentType ?? `multipart/form-data; boundary=${BOUNDARY}`,
          'idempotency-key': crypto.randomUUID(),
        }
        if (!refusal.anonymous) headers.authorization = `Bearer ${stack.apiKey}`
        const path = typeof refusal.path === 'string' ? refusal.path : await refusal.path(stack)
        const refused = await send(new URL(path, stack.baseUrl), agent, {
          method: refusal.method ?? 'POST',
          headers,
          body: refusal.body,
        })
        expect(refused.status, refused.body).toBe(refusal.status)

        const live = new URL('/health/live', stack.baseUrl)
        const same = await send(live, agent)
        expect(same.status).toBe(200)
        expect(same.reused).toBe(true)
        expect(same.socket).toBe(refused.socket)
        const fresh = await send(live, false)
        expect(fresh.status).toBe(200)
        // Which refusal it was, once the connection is known to be sound.
        expect((JSON.parse(refused.body) as { field?: string }).field).toBe(refusal.field)
      } finally {
        agent.destroy()
      }
    })
  }
})
