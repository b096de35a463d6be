/**
 * The transport's rules without a server: Retry-After honoured on 429 (in full, unless longer than
 * maxRetryAfterMs), `retryable: false` never retried, idempotent 5xx retried,
 * a POST without an idempotency key not (but completing an upload, safe to repeat, is), one Idempotency-Key per logical call across retries,
 * and a 401 turning into a session refresh (once, shared by concurrent calls).
 */
import { Cutout, CutoutProblem, memorySession, type StorageArea, storageSession } from '@cutout/sdk'
import { describe, expect, it } from 'vitest'
import { UPLOAD_CONTENT_TYPES } from '../../src/schemas/upload'

const problem = (status: number, code: string, headers: Record<string, string> = {}, retryable = true) =>
  new Response(JSON.stringify({ status, code, title: code, detail: code, retryable, requestId: 'r1' }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  })
const PNG_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])
const ok = (body: unknown) => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })

function fake(answers: Array<(req: Request) => Response>) {
  const seen: Request[] = []
  const fetch = async (req: Request) => {
    seen.push(req)
    return (answers.shift() ?? (() => ok({})))(req)
  }
  return { fetch, seen }
}

describe('retries', () => {
  it('waits Retry-After on a 429, then succeeds', async () => {
    const { fetch, seen } = fake([
      () => problem(429, 'rate_limit_exceeded', { 'retry-after': '1' }),
      () => ok({ kind: 'workspace' }),
    ])
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'sk_live_x', fetch })
    const started = Date.now()
    expect(await cutout.usage()).toEqual({ kind: 'workspace' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(seen).toHaveLength(2)
    expect(seen[1].headers.get('authorization')).toBe('Bearer sk_live_x')
  })

  it('waits the whole Retry-After, however short maxDelayMs (which caps backoff only)', async () => {
    const { fetch, seen } = fake([() => problem(429, 'rate_limit_exceeded', { 'retry-after': '1' })])
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch, retry: { maxDelayMs: 50 } })
    const started = Date.now()
    await cutout.usage()
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(seen).toHaveLength(2)
  })

  it('never retries a problem that says retryable: false (a 429 for the 21st refinement)', async () => {
    const { fetch, seen } = fake([() => problem(429, 'rate_limit_exceeded', {}, false)])
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch, retry: { baseDelayMs: 1 } })
    const err = await cutout.usage().catch((e) => e)
    expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryable: false })
    expect(seen).toHaveLength(1)
  })

  it('hands a Retry-After longer than maxRetryAfterMs (default 60 s) to the caller at once', async () => {
    const { fetch, seen } = fake([() => problem(429, 'rate_limit_exceeded', { 'retry-after': '3600' })])
    const retries: unknown[] = []
    const cutout = new Cutout({
      baseUrl: 'http://api.test',
      apiKey: 'k',
      fetch,
      retry: { maxRetries: 1, onRetry: (info) => retries.push(info) },
    })
    const started = Date.now()
    const err = await cutout.usage().catch((e) => e)
    expect(Date.now() - started).toBeLessThan(1000)
    expect(err).toBeInstanceOf(CutoutProblem)
    expect(err).toMatchObject({ status: 429, retryAfter: 3600 })
    expect(seen).toHaveLength(1)
    expect(retries).toEqual([])

    const short = fake([() => problem(503, 'processor_unavailable', { 'retry-after': '2' })])
    const bounded = new Cutout({
      baseUrl: 'http://api.test',
      apiKey: 'k',
      fetch: short.fetch,
      retry: { maxRetryAfterMs: 1000 },
    })
    expect(await bounded.usage().catch((e) => e)).toMatchObject({ status: 503, retryAfter: 2 })
    expect(short.seen).toHaveLength(1)
  })

  it('retries a creation POST with the same Idempotency-Key, and never a plain POST', async () => {
    const { fetch, seen } = fake([() => problem(503, 'processor_unavailable'), () => ok({ id: 'j1' })])
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch, retry: { baseDelayMs: 1 } })
    await cutout.createRemoval({ uploadId: '00000000-0000-4000-8000-000000000000' })
    const keys = seen.map((r) => r.headers.get('idempotency-key'))
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])

    const once = fake([() => problem(503, 'processor_unavailable')])
    const plain = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch: once.fetch, retry: { baseDelayMs: 1 } })
    const err = await plain.createApiKey({ name: 'x' }).catch((e) => e)
    expect(err).toBeInstanceOf(CutoutProblem)
    expect(err).toMatchObject({ status: 503, code: 'processor_unavailable', requestId: 'r1' })
    expect(once.seen).toHaveLength(1)
  })

  it('retries completing an upload (safe to repeat, no key), but not creating one', async () => {
    const id = '00000000-0000-4000-8000-000000000000'
    const { fetch, seen } = fake([() => problem(503, 'inference_unavailable'), () => ok({ id, status: 'ready' })])
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch, retry: { baseDelayMs: 1 } })
    const completed = await cutout.send(new Request(`http://api.test/v1/uploads/${id}/complete`, { method: 'POST' }))
    expect(completed.status).toBe(200)
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual([
      `/v1/uploads/${id}/complete`,
      `/v1/uploads/${id}/complete`,
    ])
    expect(seen[0].headers.has('idempotency-key')).toBe(false)

    const once = fake([() => problem(503, 'inference_unavailable')])
    const plain = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch: once.fetch, retry: { baseDelayMs: 1 } })
    expect((await plain.send(new Request('http://api.test/v1/uploads', { method: 'POST' }))).status).toBe(503)
    expect(once.seen).toHaveLength(1)
  })
})

describe('creation POSTs and uploads', () => {
  it('keys the creating POSTs of projects, their edits and webhooks, and retries them with that key', async () => {
    const project = '/v1/projects/0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11'
    for (const path of [
      '/v1/projects',
      '/v1/webhooks',
      ...['revisions', 'refinements', 'exports'].map((e) => `${project}/${e}`),
    ]) {
      const { fetch, seen } = fake([() => problem(503, 'processor_unavailable'), () => ok({ id: 'x' })])
      const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch, retry: { baseDelayMs: 1 } })
      const res = await cutout.send(new Request(`http://api.test${path}`, { method: 'POST', body: '{}' }))
      expect(res.status, path).toBe(200)
      const keys = seen.map((r) => r.headers.get('idempotency-key'))
      expect(keys[0], path).toMatch(/^[0-9a-f-]{36}$/)
      expect(keys, path).toEqual([keys[0], keys[0]])
    }
    // A read of the same paths and a project's other POSTs get no key.
    const { fetch, seen } = fake([() => ok({})])
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch, retry: false })
    await cutout.send(new Request(`http://api.test${project}/revisions/x`, { method: 'POST', body: '{}' }))
    expect(seen[0].headers.get('idempotency-key')).toBeNull()
  })

  it('retries a catalog image POST (multipart) with one Idempotency-Key', async () => {
    const bodies: string[] = []
    const { fetch, seen } = fake([
      () => problem(503, 'processor_unavailable'),
      () => new Response(new Uint8Array([0x89]), { status: 201, headers: { 'content-type': 'image/png' } }),
    ])
    const record = async (req: Request) => {
      bodies.push(await req.clone().text())
      return fetch(req)
    }
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch: record, retry: { baseDelayMs: 1 } })
    const form = new FormData()
    form.append('references', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }), 'front.png')
    const res = await cutout.send(new Request('http://api.test/v1/catalog-images', { method: 'POST', body: form }))
    expect(res.status).toBe(201)
    const keys = seen.map((r) => r.headers.get('idempotency-key'))
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys).toEqual([keys[0], keys[0]])
    expect(bodies[1]).toBe(bodies[0])
  })

  it.each([
    ['image/jpg', PNG_BYTES, 'image/png'],
    ['', PNG_BYTES, 'image/png'],
    ['image/x-unknown', new Uint8Array([1, 2, 3, 4]), 'application/octet-stream'],
    ['image/webp', PNG_BYTES, 'image/webp'],
  ])('upload of a Blob typed %j sends POST /v1/uploads a type the API lists', async (type, bytes, expected) => {
    const listed: readonly string[] = UPLOAD_CONTENT_TYPES
    const sent: { contentType?: string; put?: string | null } = {}
    const fetch = async (req: Request) => {
      const path = new URL(req.url).pathname
      if (path === '/v1/uploads') {
        sent.contentType = ((await req.json()) as { contentType: string }).contentType
        if (!listed.includes(sent.contentType)) return problem(400, 'invalid_input', {}, false)
        return ok({ id: 'u1', status: 'pending', expiresAt: '', uploadUrl: '/v1/uploads/u1/content' })
      }
      if (path === '/v1/uploads/u1/content') {
        sent.put = req.headers.get('content-type')
        return new Response(null, { status: 204 })
      }
      return ok({ id: 'u1', status: 'ready', expiresAt: '', uploadUrl: '' })
    }
    const cutout = new Cutout({ baseUrl: 'http://api.test', apiKey: 'k', fetch })
    const upload = await cutout.upload(new Blob([bytes], { type }))
    expect(upload.status).toBe('ready')
    expect(sent).toEqual({ contentType: expected, put: expected })
  })
})

describe('sessions', () => {
  it('refreshes an expired session once for concurrent calls and saves the new pair', async () => {
    const store = memorySession({ accessToken: 'old', refreshToken: 'rt_1', expiresAt: Date.now() - 1 })
    let refreshes = 0
    const fetch = async (req: Request) => {
      if (new URL(req.url).pathname === '/v1/auth/refresh') {
        refreshes++
        expect(await req.json()).toEqual({ refreshToken: 'rt_1' })
        return ok({ accessToken: 'new', refreshToken: 'rt_2', tokenType: 'Bearer', expiresIn: 3600 })
      }
      expect(req.headers.get('authorization')).toBe('Bearer new')
      return ok({ kind: 'workspace' })
    }
    const cutout = new Cutout({ baseUrl: 'http://api.test', session: store, fetch })
    await Promise.all([cutout.usage(), cutout.usage(), cutout.usage()])
    expect(refreshes).toBe(1)
    expect(await store.load()).toMatchObject({ accessToken: 'new', refreshToken: 'rt_2' })
  })
})

describe('sessions the API will not renew', () => {
  it('fail the call with the API’s 401 at once: not retried as if the connection were lost', async () => {
    const store = memorySession({ accessToken: 'old', refreshToken: 'rt_1', expiresAt: Date.now() - 1 })
    const retries: unknown[] = []
    const { fetch, seen } = fake([() => problem(401, 'invalid_api_key', {}, false)])
    const cutout = new Cutout({
      baseUrl: 'http://api.test',
      session: store,
      fetch,
      retry: { onRetry: (r) => retries.push(r) },
    })
    const err = await cutout.usage().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CutoutProblem)
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' })
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual(['/v1/auth/refresh'])
    expect(retries).toEqual([])
  })
})

describe('storageSession: one session in several tabs', () => {
  /** A tab's `sessionStorage`: each tab has its own, copied when the tab is duplicated. */
  const tabStorage = (copyOf?: StorageArea): StorageArea => {
    const items = new Map<string, string>()
    if (copyOf?.getItem('s')) items.set('s', copyOf.getItem('s') as string)
    return {
      getItem: (k) => items.get(k) ?? null,
      removeItem: (k) => void items.delete(k),
      setItem: (k, v) => void items.set(k, v),
    }
  }
  const delivered = () => new Promise((resolve) => setTimeout(resolve, 20))
  const session = (refreshToken: string) => ({
    accessToken: `at_${refreshToken}`,
    refreshToken,
    expiresAt: 1,
    user: 'u',
  })

  it('a pair saved in one tab replaces the same session in the others; another session is left alone', async () => {
    const a = tabStorage()
    const tabA = storageSession<ReturnType<typeof session>>(a, 's')
    tabA.start(session('rt_1'))
    const b = tabStorage(a)
    const seenByB: unknown[] = []
    const tabB = storageSession<ReturnType<typeof session>>(b, 's', { onChange: (s) => seenByB.push(s) })
    const tabC = storageSession<ReturnType<typeof session>>(tabStorage(), 's')
    tabC.start(session('rt_other'))

    tabA.save({ accessToken: 'at_2', refreshToken: 'rt_2', expiresAt: 2 })
    await delivered()
    expect(tabB.load()).toEqual({ accessToken: 'at_2', refreshToken: 'rt_2', expiresAt: 2, user: 'u' })
    expect(seenByB).toHaveLength(1)
    expect(tabC.load()?.refreshToken).toBe('rt_other')

    tabB.clear()
    await delivered()
    expect(tabA.load()).toBeUndefined()
    expect(tabC.load()?.refreshToken).toBe('rt_other')
  })
})
