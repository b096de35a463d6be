/**
 * Walks every route of /openapi.json against the access table: no credential → 401 (except the
 * public and anonymous routes), a key without the route's scope → 403, the right scope → neither.
 */
import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import { PUBLIC_ROUTES, ROUTE_ACCESS, SPECIAL_ROUTES, type RouteAccess, type RouteKey } from '../../src/services/access'
import { SCOPES, type Scope } from '../../src/services/auth'
import { api, expectProblem, seedWorkspace, startOfRateWindow } from './helpers'

type Doc = { paths: Record<string, Record<string, unknown>> }

async function routes(): Promise<string[]> {
  const doc = (await (await api('/openapi.json')).json()) as Doc
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
}

function call(route: string, key?: string) {
  const [method, template] = route.split(' ')
  const path = template.replace('{userCode}', 'BCDF-GHJK').replace(/\{[^}]+\}/g, () => crypto.randomUUID())
  const withBody = method === 'POST' || method === 'PUT'
  return api(path, {
    method,
    key,
    ...(withBody ? { json: {} } : {}),
    headers: { 'idempotency-key': crypto.randomUUID() },
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
      if ((PUBLIC_ROUTES as readonly string[]).includes(route) || access?.anonymous) {
        expect([401, 403], route).not.toContain(res.status)
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
  it('a workspace past its limit gets 429 with Retry-After; headers count down', async () => {
    const { key, workspaceId } = await seedWorkspace()
    await env.DB.prepare('UPDATE workspaces SET rate_limit_per_minute = 5 WHERE id = ?').bind(workspaceId).run()
    await startOfRateWindow()
    const remaining: string[] = []
    for (let i = 0; i < 5; i++) {
      const res = await api('/v1/usage', { key })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60')
      remaining.push(res.headers.get('ratelimit')!.match(/r=(\d+)/)![1])
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0'])
    const limited = await api('/v1/usage', { key })
    const body = await expectProblem(limited, 429, 'rate_limit_exceeded')
    expect(body.retryable).toBe(true)
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    // Another workspace is not affected.
    expect((await api('/v1/usage', { key: (await seedWorkspace()).key })).status).toBe(200)
  })

  it('an anonymous burst past the per-IP limit gets 429', async () => {
    const ip = `192.0.2.${1 + Math.floor(Math.random() * 250)}`
    await startOfRateWindow()
    const statuses: number[] = []
    for (let i = 0; i < 61; i++) statuses.push((await api('/v1/usage', { headers: { 'cf-connecting-ip': ip } })).status)
    expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true)
    await expectProblem(await api('/v1/usage', { headers: { 'cf-connecting-ip': ip } }), 429, 'rate_limit_exceeded')
  })

  it('health probes and the contract are never limited and do not count against the address', async () => {
    const ip = `198.51.100.${1 + Math.floor(Math.random() * 250)}`
    await startOfRateWindow()
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
