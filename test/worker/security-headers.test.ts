/**
 * DESIGN.md §3 "Page security", the Worker's part: every answer of the API (JSON, problems, the
 * service documents, the 404 of a path no page file matches) is `nosniff` with the referrer
 * policy. The page's own files are served by [assets] before the Worker runs, which this pool
 * does not route through; test/e2e/local-mode.test.ts checks their headers against `npm start`.
 */
import { exports } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { api, BASE, expectProblem } from './helpers'

function expectApiHeaders(res: Response): void {
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin')
}

describe('API security headers', () => {
  it.each(['/v1/usage', '/openapi.json', '/health/live'])('%s answers JSON with nosniff', async (path) => {
    const res = await api(path)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expectApiHeaders(res)
    await res.body?.cancel()
  })

  it('a problem (401) carries nosniff', async () => {
    const res = await api('/v1/jobs')
    expectApiHeaders(res)
    await expectProblem(res, 401, 'invalid_api_key')
  })

  it('a path no page file matches reaches the Worker, whose 404 problem carries nosniff', async () => {
    const res = await exports.default.fetch(new Request(new URL('/no-such-page', BASE)))
    expectApiHeaders(res)
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    await res.body?.cancel()
  })
})
