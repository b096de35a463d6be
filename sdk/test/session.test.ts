/**
 * The session rule every SDK user gets (the page, the CLI, scripts), through the public client
 * over a `storageSession` (the page's store): a lapsed access token is renewed by one refresh
 * for every request that needs it at once, and a session the API will not renew has ended, so
 * the store forgets it (and tells its listener: the page shows "signed out") instead of sending a
 * dead token again.
 */
import { Cutout, CutoutProblem, type StorageArea, storageSession } from '@cutout/sdk'
import { describe, expect, it } from 'vitest'

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': status < 300 ? 'application/json' : 'application/problem+json' },
  })

function memoryStorage(): StorageArea {
  const items = new Map<string, string>()
  return {
    getItem: (k) => items.get(k) ?? null,
    removeItem: (k) => void items.delete(k),
    setItem: (k, v) => void items.set(k, v),
  }
}

/** A tab's store holding a session whose access token lapsed a second ago. */
function lapsedTab(key: string) {
  const changes: unknown[] = []
  const store = storageSession<{ accessToken: string; refreshToken: string; expiresAt: number; user: string }>(
    memoryStorage(),
    key,
    { onChange: (s) => changes.push(s) },
  )
  store.start({ accessToken: 'at_1', refreshToken: 'rt_1', expiresAt: Date.now() - 1000, user: 'u' })
  changes.length = 0
  return { store, changes }
}

describe('a storageSession behind the client', () => {
  it('renews a lapsed token once for concurrent calls, keeping what the caller stored beside it', async () => {
    const { store, changes } = lapsedTab('one-refresh')
    const refreshes: unknown[] = []
    const fetch = async (req: Request) => {
      if (new URL(req.url).pathname === '/v1/auth/refresh') {
        refreshes.push(await req.json())
        await new Promise((resolve) => setTimeout(resolve, 20))
        return json(200, { accessToken: 'at_2', refreshToken: 'rt_2', tokenType: 'Bearer', expiresIn: 3600 })
      }
      expect(req.headers.get('authorization')).toBe('Bearer at_2')
      return json(200, { kind: 'workspace' })
    }
    const cutout = new Cutout({ baseUrl: 'http://api.test', session: store, fetch })
    await Promise.all([cutout.usage(), cutout.listJobs(), cutout.listApiKeys()])
    expect(refreshes).toEqual([{ refreshToken: 'rt_1' }])
    expect(store.load()).toMatchObject({ accessToken: 'at_2', refreshToken: 'rt_2', user: 'u' })
    expect(changes).toHaveLength(1)
  })

  it('forgets a session the API will not renew: every waiting call gets the 401, the store is empty', async () => {
    const { store, changes } = lapsedTab('ended')
    const sent: string[] = []
    const fetch = async (req: Request) => {
      sent.push(new URL(req.url).pathname)
      return json(401, { status: 401, code: 'invalid_api_key', detail: 'Sign in again', retryable: false })
    }
    const cutout = new Cutout({ baseUrl: 'http://api.test', session: store, fetch })
    const errors = await Promise.all([cutout.usage(), cutout.listJobs()].map((p) => p.catch((e: unknown) => e)))
    for (const err of errors) {
      expect(err).toBeInstanceOf(CutoutProblem)
      expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' })
    }
    expect(sent).toEqual(['/v1/auth/refresh'])
    expect(store.load()).toBeUndefined()
    expect(changes).toEqual([null])
  })

  it('keeps the session when the refresh fails for another reason (the API could not answer)', async () => {
    const { store } = lapsedTab('kept')
    const fetch = async () => json(503, { status: 503, code: 'service_unavailable', detail: 'Try again' })
    const cutout = new Cutout({ baseUrl: 'http://api.test', session: store, fetch, retry: false })
    await expect(cutout.usage()).rejects.toMatchObject({ status: 503 })
    expect(store.load()?.refreshToken).toBe('rt_1')
  })
})
