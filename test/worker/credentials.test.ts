/**
 * Missing and refused credentials (issue 43 item 4): a caller without a credential is answered
 * 401, not "no such job in this workspace", wherever it reaches past its own device's jobs; and
 * every 401 carries `WWW-Authenticate` (RFC 9110 §11.6.1), with `error="invalid_token"` when a
 * bearer token was sent (RFC 6750 §3). No model run: results are written straight to D1 and R2.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { deviceCookie, deviceWorkspaceId } from '../../src/services/device'
import { api, type ApiInit, expectProblem, seedWorkspace } from './helpers'
import { storedResult } from './stored-results'

const CHALLENGE = 'Bearer realm="cutout"'
const INVALID_TOKEN = 'Bearer realm="cutout", error="invalid_token"'

/** The 401 `invalid_api_key` problem with the challenge it must carry. */
async function expectUnauthorized(res: Response, challenge: string) {
  const problem = await expectProblem(res, 401, 'invalid_api_key')
  expect(res.headers.get('www-authenticate')).toBe(challenge)
  return problem
}

/** A device's cookie header and its pseudo-workspace, as the removal that minted it would leave them. */
async function anonymousDevice() {
  const id = crypto.randomUUID()
  const setCookie = await deviceCookie(id, env.DEVICE_SIGNING_KEY)
  return { workspaceId: deviceWorkspaceId(id), cookie: setCookie.split(';')[0] }
}

describe('a job read without a credential', () => {
  it("is 401 for a workspace's job on every job route, and for an unknown id", async () => {
    const { workspaceId } = await seedWorkspace()
    const job = await storedResult(workspaceId)
    const device = await anonymousDevice()
    for (const id of [job.id, crypto.randomUUID()]) {
      for (const headers of [{}, { cookie: device.cookie }] as Record<string, string>[]) {
        const reads: [string, ApiInit][] = [
          [`/v1/jobs/${id}`, { headers }],
          [`/v1/jobs/${id}/result`, { headers }],
          [`/v1/jobs/${id}/events`, { headers }],
          [`/v1/jobs/${id}`, { method: 'DELETE', headers }],
        ]
        for (const [path, init] of reads) {
          const problem = await expectUnauthorized(await api(path, init), CHALLENGE).catch((err) => {
            throw new Error(`${init.method ?? 'GET'} ${path} ${Object.keys(headers)}: ${err.message}`)
          })
          expect(problem.detail).toBe(
            `This device made no job ${id}. Expected Authorization: Bearer with an API key (sk_live_…) or a session access token`,
          )
        }
      }
    }
  })

  it("still reads the device's own job, and a signed result URL needs no credential at all", async () => {
    const device = await anonymousDevice()
    const own = await storedResult(device.workspaceId)
    const headers = { cookie: device.cookie }
    expect((await api(`/v1/jobs/${own.id}`, { headers })).status).toBe(200)
    const bytes = await api(own.path, { headers })
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(own.bytes)
    // Its own job without a result is still "no result", not a missing credential.
    await env.DB.prepare(`UPDATE jobs SET status = 'processing', result_key = NULL WHERE id = ?`).bind(own.id).run()
    await expectProblem(await api(own.path, { headers }), 404, 'job_not_found')

    const { workspaceId } = await seedWorkspace()
    for (const kind of ['remove_background', 'export'] as const) {
      const signed = await storedResult(workspaceId, kind)
      const res = await api(signed.url)
      expect(res.status, kind).toBe(200)
      expect(new Uint8Array(await res.arrayBuffer()), kind).toEqual(signed.bytes)
    }
  })

  it("an export's result without a key or a signature is 401 too", async () => {
    const { workspaceId } = await seedWorkspace()
    const exported = await storedResult(workspaceId, 'export')
    await expectUnauthorized(await api(exported.path), CHALLENGE)
  })
})

describe('WWW-Authenticate on every 401', () => {
  it('names the Bearer scheme and realm; error="invalid_token" only when a token was sent', async () => {
    const { workspaceId } = await seedWorkspace()
    const result = await storedResult(workspaceId)
    const tampered = result.url.replace(/sig=([0-9a-f])/, (_, c) => `sig=${c === '0' ? '1' : '0'}`)
    const absent: [string, ApiInit][] = [
      ['/v1/jobs', {}],
      ['/v1/api-keys', { method: 'POST', json: {} }],
      ['/v1/auth/refresh', { method: 'POST', json: { refreshToken: 'rt_made-up' } }],
      ['/mcp', { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }],
      [tampered, {}],
    ]
    for (const [path, init] of absent) {
      await expectUnauthorized(await api(path, init), CHALLENGE).catch((err) => {
        throw new Error(`${path}: ${err.message}`)
      })
    }
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'
    for (const key of ['sk_live_not-a-real-key', jwt, 'neither']) {
      await expectUnauthorized(await api('/v1/jobs', { key }), INVALID_TOKEN).catch((err) => {
        throw new Error(`${key}: ${err.message}`)
      })
    }
    // A revoked key, and an expired one.
    const expired = await seedWorkspace({ expiresAt: new Date(Date.now() - 1000).toISOString() })
    await expectUnauthorized(await api('/v1/usage', { key: expired.key }), INVALID_TOKEN)
  })

  it('no other status carries it', async () => {
    const { key } = await seedWorkspace({ scopes: ['jobs:read'] })
    const forbidden = await api('/v1/api-keys', { key })
    expect(forbidden.status).toBe(403)
    expect(forbidden.headers.get('www-authenticate')).toBeNull()
    const missing = await api(`/v1/jobs/${crypto.randomUUID()}`, { key })
    expect(missing.status).toBe(404)
    expect(missing.headers.get('www-authenticate')).toBeNull()
  })
})
