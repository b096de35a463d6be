/**
 * Walks every route of /openapi.json against the access table: no credential → 401 (except the
 * public and anonymous routes), a key without the route's scope → 403, the right scope → neither.
 */
import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import { PUBLIC_ROUTES, ROUTE_ACCESS, SPECIAL_ROUTES, type RouteAccess, type RouteKey } from '../../src/services/access'
import { SCOPES, type Scope } from '../../src/services/auth'
import { api, burstUntilLimited, expectProblem, seedWorkspace, waitOutRetryAfter } from './helpers'

type Doc = { paths: Record<string, Record<string, unknown>> }

async function routes(): Promise<string[]> {
  const doc = (await (await api('/openapi.json')).json()) as Doc
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
}

/** Calls `route`; without a key from an address of its own, so the walk spends no shared window. */
function call(route: string, key?: string) {
  const [method, template] = route.split(' ')
  const path = template.replace('{userCode}', 'BCDF-GHJK').replace(/\{[^}]+\}/g, () => crypto.randomUUID())
  const withBody = method === 'POST' || method === 'PUT'
  const address: Record<string, string> = key
    ? {}
    : { 'cf-connecting-ip': `2001:db8::${Math.floor(Math.random() * 0xffff).toString(16)}` }
  return api(path, {
    method,
    key,
    ...(withBody ? { json: {} } : {}),
    headers: { 'idempotency-key': crypto.randomUUID(), ...address },
  })
}

describe('route access', () => {
  it('every documented route is in the access table, the public list or the special list', async () => {
    const known = new Set<string>([...Object.keys(ROUTE_ACCESS), ...PUBLIC_ROUTES, ...SPECIAL_ROUTES])
    const listed = await routes()
    expect(listed.filter((r) => !known.has(r))).toEqual([])
    expect(listed.length).toBeGreaterThan(25)
  })

  it('no credential → 401 except public and anonymous routes', async () => {
    for (const route of await routes()) {
      const res = await call(route)
      const access: RouteAccess | undefined = ROUTE_ACCESS[route as RouteKey]
      if ((PUBLIC_ROUTES as readonly string[]).includes(route)) {
        expect([401, 403], route).not.toContain(res.status)
      } else if (access?.anonymous) {
        // Let through as the caller's device, which made no job of this random id: that job needs a
        // credential, so the job routes answer 401 for it, from the job lookup, not the gate.
        expect(res.status, route).not.toBe(403)
        if (res.status === 401) {
          const problem = await expectProblem(res, 401, 'invalid_api_key')
          expect(problem.detail, route).toMatch(/^This device made no job /)
        }
      } else {
        await expectProblem(res, 401, 'invalid_api_key').catch((err) => {
          throw new Error(`${route}: ${err.message}`)
        })
      }
    }
  })

  it('a key without the route’s scope → 403; with it → neither 401 nor 403', async () => {
    const byScope = new Map<Scope, string>()
    for (const scope of SCOPES)
      byScope.set(scope, (await seedWorkspace({ scopes: SCOPES.filter((s) => s !== scope) })).key)
    const full = await seedWorkspace()
    for (const [route, access] of Object.entries(ROUTE_ACCESS)) {
      for (const scope of access.scopes) {
        await expectProblem(await call(route, byScope.get(scope)), 403, 'insufficient_scope').catch((err) => {
          throw new Error(`${route} without ${scope}: ${err.message}`)
        })
      }
      const res = await call(route, full.key)
      expect([401, 403], `${route} → ${res.status}`).not.toContain(res.status)
      expect(res.status, `${route} → ${res.status}`).toBeLessThan(500)
    }
    // Device approval is for people: an API key, whatever its scopes, is refused.
    await expectProblem(
      await call('POST /v1/device-authorizations/{userCode}/approve', full.key),
      403,
      'insufficient_scope',
    )
  })
})

describe('rate limits', () => {
  /** The window the test config sets (vitest.worker.config.mts); production's is a minute. */
  const windowSeconds = Number(env.RATE_LIMIT_WINDOW_SECONDS)
  const remainingOf = (res: Response) => res.headers.get('ratelimit')?.match(/r=(\d+)/)?.[1]

  it('a workspace past its limit gets 429 with Retry-After; headers count down; the next window serves again', async () => {
    const { key, workspaceId } = await seedWorkspace()
    await env.DB.prepare('UPDATE workspaces SET rate_limit_per_minute = 5 WHERE id = ?').bind(workspaceId).run()
    const usage = () => api('/v1/usage', { key })
    const { refused, served } = await burstUntilLimited(usage, 50)
    expect(served.map((res) => res.status)).toEqual([200, 200, 200, 200, 200])
    expect(served.map(remainingOf)).toEqual(['4', '3', '2', '1', '0'])
    for (const res of served) expect(res.headers.get('ratelimit-policy')).toBe(`"default";q=5;w=${windowSeconds}`)
    const body = await expectProblem(refused, 429, 'rate_limit_exceeded')
    expect(body.retryable).toBe(true)
    const retryAfter = Number(refused.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(windowSeconds)
    expect(body.detail).toBe(`Expected at most 5 requests per ${windowSeconds} s; retry after ${retryAfter} s`)
    expect(refused.headers.get('ratelimit')).toBe(`"default";r=0;t=${retryAfter}`)
    // Another workspace is not affected.
    expect((await api('/v1/usage', { key: (await seedWorkspace()).key })).status).toBe(200)
    // After the Retry-After the window has reset: the whole limit again.
    await waitOutRetryAfter(refused)
    const next = await usage()
    expect(next.status).toBe(200)
    expect(remainingOf(next)).toBe('4')
  })

  it('an anonymous burst past the per-IP limit gets 429, and the address is served again after Retry-After', async () => {
    const ip = `192.0.2.${1 + Math.floor(Math.random() * 250)}`
    const usage = () => api('/v1/usage', { headers: { 'cf-connecting-ip': ip } })
    const limit = Number(env.RATE_LIMIT_ANONYMOUS_PER_MINUTE)
    const { refused, served } = await burstUntilLimited(usage, 5 * limit)
    expect(served).toHaveLength(limit)
    expect(served.every((res) => res.status === 200)).toBe(true)
    await expectProblem(refused, 429, 'rate_limit_exceeded')
    await waitOutRetryAfter(refused)
    const next = await usage()
    expect(next.status).toBe(200)
    expect(remainingOf(next)).toBe(String(limit - 1))
  })

  it('health probes and the contract are never limited and do not count against the address', async () => {
    // A fresh address: its first counted request opens its window, whenever the probes end.
    const ip = `198.51.100.${1 + Math.floor(Math.random() * 250)}`
    for (let i = 0; i < 100; i++) {
      const path = ['/health/live', '/health/ready', '/openapi.json'][i % 3]
      const res = await api(path, { headers: { 'cf-connecting-ip': ip } })
      expect(res.status, path).not.toBe(429)
      expect(res.headers.get('ratelimit'), path).toBeNull()
    }
    // The address's window is untouched: its first counted request has all but one left.
    const counted = await api('/v1/usage', { headers: { 'cf-connecting-ip': ip } })
    const limit = Number(env.RATE_LIMIT_ANONYMOUS_PER_MINUTE)
    expect(counted.headers.get('ratelimit')).toMatch(new RegExp(`^"default";r=${limit - 1};t=\\d+$`))
  })
})
