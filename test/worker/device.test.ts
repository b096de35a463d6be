import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/lib/crypto'
import { generateUserCode, USER_CODE_ALPHABET } from '../../src/services/device-authorizations'
import { signIn, type SignedIn } from './auth-helpers'
import { api, expectProblem, seedWorkspace } from './helpers'
import type { DeviceAuthorization } from '../../src/services/device-authorizations'

const USER_CODE = new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`)

async function createAuthorization(client = 'cutout-cli test'): Promise<DeviceAuthorization> {
  const res = await api('/v1/device-authorizations', { method: 'POST', json: { client } })
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`)
  return (await res.json()) as DeviceAuthorization
}

const poll = (deviceCode: string) => api('/v1/device-authorizations/token', { method: 'POST', json: { deviceCode } })
const approve = (userCode: string, key?: string, json?: unknown) =>
  api(`/v1/device-authorizations/${encodeURIComponent(userCode)}/approve`, { method: 'POST', key, json })

/** Moves the last poll into the past, as if the client had waited `seconds`. */
async function waitAsIf(deviceCode: string, seconds: number) {
  await env.DB.prepare('UPDATE device_authorizations SET last_polled_at = ? WHERE device_code_hash = ?')
    .bind(new Date(Date.now() - seconds * 1000).toISOString(), await sha256Hex(deviceCode))
    .run()
}

describe('POST /v1/device-authorizations', () => {
  it('returns a device code, an XXXX-XXXX user code without vowels, the URIs, 600 s and 5 s', async () => {
    const auth = await createAuthorization()
    expect(auth.userCode).toMatch(USER_CODE)
    expect(auth.deviceCode).toMatch(/^dc_[A-Za-z0-9_-]{43}$/)
    expect(auth).toMatchObject({
      verificationUri: 'https://api.test/device',
      verificationUriComplete: `https://api.test/device?user_code=${auth.userCode}`,
      expiresIn: 600,
      interval: 5,
    })
    const row = await env.DB.prepare('SELECT * FROM device_authorizations WHERE device_code_hash = ?')
      .bind(await sha256Hex(auth.deviceCode))
      .first<Record<string, unknown>>()
    expect(row).toMatchObject({
      status: 'pending',
      client: 'cutout-cli test',
      user_code: auth.userCode.replace('-', ''),
    })
    expect(JSON.stringify(row)).not.toContain(auth.deviceCode.slice(3))
  })

  it('requires a client', async () => {
    await expectProblem(
      await api('/v1/device-authorizations', { method: 'POST', json: {} }),
      400,
      'invalid_input',
      'client',
    )
    await expectProblem(
      await api('/v1/device-authorizations', { method: 'POST', json: { client: 'x'.repeat(101) } }),
      400,
      'invalid_input',
      'client',
    )
  })

  it('user codes use only the consonant alphabet', () => {
    const letters = new Set<string>()
    for (let i = 0; i < 500; i++) {
      const code = generateUserCode()
      expect(code).toMatch(USER_CODE)
      for (const ch of code.replace('-', '')) letters.add(ch)
    }
    expect(letters.size).toBe(USER_CODE_ALPHABET.length)
    expect(USER_CODE_ALPHABET).not.toMatch(/[AEIOUY0-9]/)
  })
})

describe('device flow', () => {
  it('pending → slow_down → approved → tokens once → second exchange rejected', async () => {
    const user = await signIn()
    const auth = await createAuthorization('cutout-cli 1.0')

    const pending = await poll(auth.deviceCode)
    expect(pending.headers.get('retry-after')).toBe('5')
    const p = await expectProblem(pending, 428, 'authorization_pending')
    expect(p.retryable).toBe(true)

    // Polling again at once is too fast: 429, and the interval grows by five seconds each time.
    const slow = await poll(auth.deviceCode)
    expect(slow.headers.get('retry-after')).toBe('10')
    await expectProblem(slow, 429, 'rate_limit_exceeded')
    const slower = await poll(auth.deviceCode)
    expect(slower.headers.get('retry-after')).toBe('15')
    await expectProblem(slower, 429, 'rate_limit_exceeded')

    // Waiting 14 s is still too soon for a 15 s interval; 15 s is fine.
    await waitAsIf(auth.deviceCode, 14)
    await expectProblem(await poll(auth.deviceCode), 429, 'rate_limit_exceeded')
    await waitAsIf(auth.deviceCode, 20)
    await expectProblem(await poll(auth.deviceCode), 428, 'authorization_pending')

    expect((await approve(auth.userCode, user.accessToken)).status).toBe(204)

    await waitAsIf(auth.deviceCode, 20)
    const granted = await poll(auth.deviceCode)
    expect(granted.status).toBe(200)
    const tokens = (await granted.json()) as SignedIn
    expect(Object.keys(tokens).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken', 'tokenType'])
    expect(tokens).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600 })
    const session = await env.DB.prepare(
      'SELECT s.* FROM sessions s JOIN refresh_tokens rt ON rt.session_id = s.id WHERE rt.hash = ?',
    )
      .bind(await sha256Hex(tokens.refreshToken))
      .first<Record<string, string>>()
    expect(session).toMatchObject({
      user_id: user.user.id,
      workspace_id: user.workspace.id,
      method: 'device',
      client: 'cutout-cli 1.0',
    })
    expect((await api('/v1/usage', { key: tokens.accessToken })).status).toBe(200)
    // The device has its own session: refreshing it works independently of the browser's.
    expect(
      (await api('/v1/auth/refresh', { method: 'POST', json: { refreshToken: tokens.refreshToken } })).status,
    ).toBe(200)

    await waitAsIf(auth.deviceCode, 60)
    await expectProblem(await poll(auth.deviceCode), 400, 'invalid_input', 'deviceCode')
    // Even polled at once, an exchanged code stays rejected (never 429 or 200).
    await expectProblem(await poll(auth.deviceCode), 400, 'invalid_input', 'deviceCode')
  })

  it('hands out tokens exactly once to concurrent polls', async () => {
    const user = await signIn()
    const auth = await createAuthorization()
    expect((await approve(auth.userCode, user.accessToken)).status).toBe(204)
    const results = await Promise.all([poll(auth.deviceCode), poll(auth.deviceCode), poll(auth.deviceCode)])
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
  })

  it('an expired device code is 400 on the token endpoint and 404 on approve', async () => {
    const user = await signIn()
    const auth = await createAuthorization()
    await env.DB.prepare('UPDATE device_authorizations SET expires_at = ? WHERE device_code_hash = ?')
      .bind(new Date(Date.now() - 1000).toISOString(), await sha256Hex(auth.deviceCode))
      .run()
    const expired = await expectProblem(await poll(auth.deviceCode), 400, 'invalid_input', 'deviceCode')
    expect(expired.detail).toMatch(/expired/)
    await expectProblem(await approve(auth.userCode, user.accessToken), 404, 'device_authorization_not_found')
  })

  it('an unknown device code is 400', async () => {
    await expectProblem(await poll(`dc_${'A'.repeat(43)}`), 400, 'invalid_input', 'deviceCode')
    await expectProblem(
      await api('/v1/device-authorizations/token', { method: 'POST', json: {} }),
      400,
      'invalid_input',
      'deviceCode',
    )
  })
})

describe('approve', () => {
  it('needs a signed-in session: 401 without a credential, 403 with an API key', async () => {
    const auth = await createAuthorization()
    await expectProblem(await approve(auth.userCode), 401, 'invalid_api_key')
    const { key } = await seedWorkspace()
    await expectProblem(await approve(auth.userCode, key), 403, 'insufficient_scope')
    const row = await env.DB.prepare('SELECT status FROM device_authorizations WHERE user_code = ?')
      .bind(auth.userCode.replace('-', ''))
      .first<{ status: string }>()
    expect(row?.status).toBe('pending')
  })

  it('accepts the code as typed (lower case, no hyphen) and only once', async () => {
    const user = await signIn()
    const auth = await createAuthorization()
    expect((await approve(auth.userCode.replace('-', '').toLowerCase(), user.accessToken)).status).toBe(204)
    await expectProblem(await approve(auth.userCode, user.accessToken), 400, 'invalid_input', 'userCode')
  })

  it('an unknown code is 404', async () => {
    const user = await signIn()
    await expectProblem(await approve('BCDF-GHJK', user.accessToken), 404, 'device_authorization_not_found')
  })

  it('approves for a chosen workspace the user belongs to, and never for another', async () => {
    const user = await signIn()
    const team = await seedWorkspace()
    const stranger = await seedWorkspace()
    await env.DB.prepare("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES (?, ?, 'member')")
      .bind(team.workspaceId, user.user.id)
      .run()
    const auth = await createAuthorization()
    await expectProblem(
      await approve(auth.userCode, user.accessToken, { workspaceId: stranger.workspaceId }),
      404,
      'workspace_not_found',
    )
    expect((await approve(auth.userCode, user.accessToken, { workspaceId: team.workspaceId })).status).toBe(204)
    const tokens = (await (await poll(auth.deviceCode)).json()) as SignedIn
    const payload = JSON.parse(atob(tokens.accessToken.split('.')[1].replaceAll('-', '+').replaceAll('_', '/')))
    expect(payload.wid).toBe(team.workspaceId)
    // Jobs listed with the device's token are the team workspace's.
    expect((await api('/v1/jobs', { key: tokens.accessToken })).status).toBe(200)
  })
})

describe('GET /v1/workspaces', () => {
  it("lists the signed-in user's workspaces, the session's marked current; keys and strangers are refused", async () => {
    const user = await signIn()
    const team = await seedWorkspace()
    await env.DB.prepare(
      "INSERT INTO workspace_members (workspace_id, user_id, role, created_at) VALUES (?, ?, 'member', '2999-01-01T00:00:00.000Z')",
    )
      .bind(team.workspaceId, user.user.id)
      .run()
    const res = await api('/v1/workspaces', { key: user.accessToken })
    expect(res.status).toBe(200)
    const { workspaces } = (await res.json()) as { workspaces: { id: string; role: string; current: boolean }[] }
    expect(workspaces).toEqual([
      { id: user.workspace.id, name: user.workspace.name, role: 'owner', current: true },
      { id: team.workspaceId, name: expect.any(String), role: 'member', current: false },
    ])
    await expectProblem(await api('/v1/workspaces', { key: team.key }), 403, 'insufficient_scope')
    await expectProblem(await api('/v1/workspaces'), 401, 'invalid_api_key')
  })
})

describe('GET /v1/device-authorizations/{userCode}', () => {
  it('shows a signed-in person which client asked, as typed, until it expires; keys are refused', async () => {
    const user = await signIn()
    const auth = await createAuthorization('cutout-cli on ada-laptop')
    const typed = auth.userCode.toLowerCase().replace('-', '')
    const res = await api(`/v1/device-authorizations/${typed}`, { key: user.accessToken })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      userCode: auth.userCode,
      client: 'cutout-cli on ada-laptop',
      status: 'pending',
      expiresAt: expect.any(String),
    })
    expect((await approve(auth.userCode, user.accessToken)).status).toBe(204)
    const after = await api(`/v1/device-authorizations/${auth.userCode}`, { key: user.accessToken })
    expect(((await after.json()) as { status: string }).status).toBe('approved')

    await expectProblem(
      await api('/v1/device-authorizations/BCDF-GHJK', { key: user.accessToken }),
      404,
      'device_authorization_not_found',
    )
    await expectProblem(
      await api(`/v1/device-authorizations/${auth.userCode}`, { key: (await seedWorkspace()).key }),
      403,
      'insufficient_scope',
    )
    await expectProblem(await api(`/v1/device-authorizations/${auth.userCode}`), 401, 'invalid_api_key')
  })
})
