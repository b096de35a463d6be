import { env } from 'cloudflare:test'
import { SignJWT, UnsecuredJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { sha256Hex } from '../../src/lib/crypto'
import { buildMimeMessage, DevOutboxSender, emailSenderFor, SendEmailBindingSender } from '../../src/services/email'
import { CODE_WINDOW_MS, generateCode, MAX_CODES_PER_WINDOW } from '../../src/services/email-sign-in'
import { REFRESH_REUSE_WINDOW_MS } from '../../src/services/sessions'
import { FREE_TIER_CREDITS } from '../../src/services/users'
import { latestCode, newEmail, signIn, startSignIn, verifySignIn, wrongCode, type SignedIn } from './auth-helpers'
import { api, BASE, expectProblem, seedWorkspace } from './helpers'

const KEY = () => new TextEncoder().encode(env.SESSION_SIGNING_KEY)

/** An access token with chosen claims and header; the defaults are what the service issues. */
async function forge(
  signed: SignedIn,
  opts: { key?: Uint8Array; iss?: string; aud?: string; exp?: number; typ?: string | null; alg?: string } = {},
) {
  const payload = JSON.parse(atob(signed.accessToken.split('.')[1].replaceAll('-', '+').replaceAll('_', '/')))
  const header: Record<string, string> = { alg: opts.alg ?? 'HS256' }
  if (opts.typ !== null) header.typ = opts.typ ?? 'at+jwt'
  return new SignJWT({ wid: payload.wid, sid: payload.sid, scp: payload.scp })
    .setProtectedHeader(header as { alg: string })
    .setSubject(payload.sub)
    .setIssuer(opts.iss ?? 'cutout')
    .setAudience(opts.aud ?? 'cutout-api')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 600)
    .sign(opts.key ?? KEY())
}

describe('email sign-in: start', () => {
  it('answers 202 {status:"sent"} alike for known and unknown emails, and sends a code to both', async () => {
    const known = (await signIn()).user.email
    const unknown = newEmail('nobody')
    const a = await startSignIn(known)
    const b = await startSignIn(unknown)
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    const [bodyA, bodyB] = [await a.text(), await b.text()]
    expect(bodyA).toBe('{"status":"sent"}')
    expect(bodyB).toBe(bodyA)
    const headerNames = (r: Response) => [...r.headers.keys()].filter((h) => h !== 'x-request-id').sort()
    expect(headerNames(b)).toEqual(headerNames(a))
    // The same work happened for both: a challenge row and an email each.
    expect(await latestCode(known)).toMatch(/^\d{6}$/)
    expect(await latestCode(unknown)).toMatch(/^\d{6}$/)
    // …and the unknown address got no account from starting.
    expect(await env.DB.prepare('SELECT 1 FROM users WHERE email = ?').bind(unknown).first()).toBeNull()
  })

  it('stores the code only as a hash', async () => {
    const email = newEmail()
    await startSignIn(email)
    const code = await latestCode(email)
    const row = await env.DB.prepare('SELECT * FROM email_challenges WHERE email = ?')
      .bind(email)
      .first<Record<string, unknown>>()
    expect(row).not.toBeNull()
    expect(JSON.stringify(row)).not.toContain(code)
    expect(row!.code_hash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('normalises the email and validates its format', async () => {
    const email = newEmail()
    expect((await startSignIn(`  ${email.toUpperCase()} `)).status).toBe(202)
    const session = (await (await verifySignIn(email, await latestCode(email))).json()) as SignedIn
    expect(session.user.email).toBe(email)
    await expectProblem(await startSignIn('not-an-email'), 400, 'invalid_input', 'email')
    await expectProblem(await api('/v1/auth/email/start', { method: 'POST', json: {} }), 400, 'invalid_input', 'email')
    await expectProblem(
      await api('/v1/auth/email/start', { method: 'POST', json: { email, extra: 1 } }),
      400,
      'invalid_input',
      'extra',
    )
  })

  it(`limits codes per email to ${MAX_CODES_PER_WINDOW} per window (429 with Retry-After)`, async () => {
    const email = newEmail()
    for (let i = 0; i < MAX_CODES_PER_WINDOW; i++) expect((await startSignIn(email)).status).toBe(202)
    const res = await startSignIn(email)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    await expectProblem(res, 429, 'rate_limit_exceeded')
    // The window passes: codes flow again.
    await env.DB.prepare('UPDATE email_challenges SET window_started_at = ? WHERE email = ?')
      .bind(new Date(Date.now() - CODE_WINDOW_MS - 1000).toISOString(), email)
      .run()
    expect((await startSignIn(email)).status).toBe(202)
  })

  it('makes six-digit codes from the whole range', () => {
    const codes = Array.from({ length: 2000 }, generateCode)
    for (const c of codes) expect(c).toMatch(/^\d{6}$/)
    expect(new Set(codes.map((c) => c[0])).size).toBe(10)
  })
})

describe('email sign-in: verify', () => {
  it('creates the user, a default workspace with free-tier credits and a session on first sign-in', async () => {
    const email = newEmail()
    await startSignIn(email)
    const res = await verifySignIn(email, await latestCode(email))
    expect(res.status).toBe(200)
    const body = (await res.json()) as SignedIn
    expect(body).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 3600,
      user: { email },
      workspace: { name: 'Personal' },
    })
    expect(body.accessToken.split('.')).toHaveLength(3)
    expect(body.refreshToken).toMatch(/^rt_[A-Za-z0-9_-]{43}$/)
    const usage = (await (await api('/v1/usage', { key: body.accessToken })).json()) as { limit: number; kind: string }
    expect(usage).toMatchObject({ kind: 'workspace', limit: FREE_TIER_CREDITS })
    expect((await api('/v1/jobs', { key: body.accessToken })).status).toBe(200)
    const member = await env.DB.prepare('SELECT role FROM workspace_members WHERE user_id = ? AND workspace_id = ?')
      .bind(body.user.id, body.workspace.id)
      .first<{ role: string }>()
    expect(member?.role).toBe('owner')
  })

  it('signs the same user into the same workspace next time', async () => {
    const first = await signIn()
    const again = await signIn(first.user.email)
    expect(again.user).toEqual(first.user)
    expect(again.workspace).toEqual(first.workspace)
    const count = await env.DB.prepare('SELECT COUNT(*) AS n FROM workspace_members WHERE user_id = ?')
      .bind(first.user.id)
      .first<{ n: number }>()
    expect(count?.n).toBe(1)
  })

  it('rejects a wrong code with 400 field code', async () => {
    const email = newEmail()
    await startSignIn(email)
    const code = await latestCode(email)
    const body = await expectProblem(await verifySignIn(email, wrongCode(code)), 400, 'invalid_input', 'code')
    expect(body.detail).toBe('The code is not correct; 4 attempts left')
    expect((await verifySignIn(email, code)).status).toBe(200)
  })

  it('brute force: after five failures the sixth attempt fails even with the right code', async () => {
    const email = newEmail()
    await startSignIn(email)
    const code = await latestCode(email)
    for (let i = 0; i < 5; i++)
      await expectProblem(await verifySignIn(email, wrongCode(code)), 400, 'invalid_input', 'code')
    const sixth = await expectProblem(await verifySignIn(email, code), 400, 'invalid_input', 'code')
    expect(sixth.detail).toMatch(/too many attempts failed/)
  })

  it('brute force in parallel: at most five guesses are ever checked', async () => {
    const email = newEmail()
    await startSignIn(email)
    const code = await latestCode(email)
    const guesses = Array.from({ length: 12 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'))
    const results = await Promise.all(guesses.map((g) => verifySignIn(email, g)))
    for (const r of results) expect(r.status).toBe(400)
    const row = await env.DB.prepare('SELECT attempts FROM email_challenges WHERE email = ?')
      .bind(email)
      .first<{ attempts: number }>()
    expect(row?.attempts).toBe(5)
    await expectProblem(await verifySignIn(email, code), 400, 'invalid_input', 'code')
  })

  it('rejects an expired code', async () => {
    const email = newEmail()
    await startSignIn(email)
    const code = await latestCode(email)
    await env.DB.prepare('UPDATE email_challenges SET expires_at = ? WHERE email = ?')
      .bind(new Date(Date.now() - 1000).toISOString(), email)
      .run()
    await expectProblem(await verifySignIn(email, code), 400, 'invalid_input', 'code')
  })

  it('codes last ten minutes', async () => {
    const email = newEmail()
    const before = Date.now()
    await startSignIn(email)
    const after = Date.now()
    const row = await env.DB.prepare('SELECT expires_at FROM email_challenges WHERE email = ?')
      .bind(email)
      .first<{ expires_at: string }>()
    // Issued at some instant between before and after, however long the request took.
    const expiresAt = Date.parse(row!.expires_at)
    expect(expiresAt - before).toBeGreaterThan(599_000)
    expect(expiresAt - after).toBeLessThanOrEqual(601_000)
  })

  it('a code works once', async () => {
    const email = newEmail()
    await startSignIn(email)
    const code = await latestCode(email)
    expect((await verifySignIn(email, code)).status).toBe(200)
    await expectProblem(await verifySignIn(email, code), 400, 'invalid_input', 'code')
  })

  it('a new start replaces the previous code', async () => {
    const email = newEmail()
    await startSignIn(email)
    const first = await latestCode(email)
    await startSignIn(email)
    const second = await latestCode(email)
    if (first !== second) await expectProblem(await verifySignIn(email, first), 400, 'invalid_input', 'code')
    expect((await verifySignIn(email, second)).status).toBe(200)
  })

  it('validates the code format and fails for an email without a challenge', async () => {
    await expectProblem(await verifySignIn(newEmail(), '12ab56'), 400, 'invalid_input', 'code')
    await expectProblem(await verifySignIn(newEmail(), '123456'), 400, 'invalid_input', 'code')
  })
})

describe('sessions', () => {
  const refresh = (refreshToken?: string) =>
    api('/v1/auth/refresh', { method: 'POST', json: refreshToken === undefined ? {} : { refreshToken } })

  it('refresh rotates: a new pair, the old refresh token is used up', async () => {
    const s = await signIn()
    const res = await refresh(s.refreshToken)
    expect(res.status).toBe(200)
    const next = (await res.json()) as SignedIn
    expect(next).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600 })
    expect(next.refreshToken).not.toBe(s.refreshToken)
    expect((await api('/v1/usage', { key: next.accessToken })).status).toBe(200)
    const third = await refresh(next.refreshToken)
    expect(third.status).toBe(200)
  })

  /** Moves a token's exchange back past the reuse window, as if it happened that long ago. */
  const rotatedLongAgo = async (refreshToken: string) =>
    env.DB.prepare('UPDATE refresh_tokens SET used_at = ? WHERE hash = ?')
      .bind(new Date(Date.now() - REFRESH_REUSE_WINDOW_MS - 1000).toISOString(), await sha256Hex(refreshToken))
      .run()

  it('reuse of a rotated refresh token after the reuse window revokes the whole family', async () => {
    const s = await signIn()
    const next = (await (await refresh(s.refreshToken)).json()) as SignedIn
    await rotatedLongAgo(s.refreshToken)
    const reuse = await expectProblem(await refresh(s.refreshToken), 401, 'invalid_api_key')
    expect(reuse.detail).toMatch(/already used/)
    // The legitimate holder's newer tokens die with the family.
    await expectProblem(await refresh(next.refreshToken), 401, 'invalid_api_key')
    await expectProblem(await api('/v1/usage', { key: next.accessToken }), 401, 'invalid_api_key')
    await expectProblem(await api('/v1/usage', { key: s.accessToken }), 401, 'invalid_api_key')
    // Another session of the same user is untouched.
    const other = await signIn(s.user.email)
    expect((await api('/v1/usage', { key: other.accessToken })).status).toBe(200)
  })

  it('concurrent refreshes with one token all get the same new refresh token, and the session lives', async () => {
    const s = await signIn()
    const results = await Promise.all([1, 2, 3, 4].map(() => refresh(s.refreshToken)))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200])
    const pairs = (await Promise.all(results.map((r) => r.json()))) as SignedIn[]
    expect(new Set(pairs.map((p) => p.refreshToken)).size).toBe(1)
    for (const pair of pairs) expect((await api('/v1/usage', { key: pair.accessToken })).status).toBe(200)
    // The shared successor rotates as usual, once.
    const third = (await (await refresh(pairs[0].refreshToken)).json()) as SignedIn
    expect(third.refreshToken).not.toBe(pairs[0].refreshToken)
    expect((await api('/v1/usage', { key: third.accessToken })).status).toBe(200)
  })

  it("within the reuse window a rotated token answers the family's newest token, even two rotations on", async () => {
    const s = await signIn()
    const first = (await (await refresh(s.refreshToken)).json()) as SignedIn
    const second = (await (await refresh(first.refreshToken)).json()) as SignedIn
    const late = await refresh(s.refreshToken)
    expect(late.status).toBe(200)
    expect(((await late.json()) as SignedIn).refreshToken).toBe(second.refreshToken)
    expect((await api('/v1/usage', { key: second.accessToken })).status).toBe(200)
  })

  it('a replay after the window revokes even when the race within it was answered', async () => {
    const s = await signIn()
    const [a, b] = await Promise.all([refresh(s.refreshToken), refresh(s.refreshToken)])
    const pair = (await a.json()) as SignedIn
    expect(((await b.json()) as SignedIn).refreshToken).toBe(pair.refreshToken)
    await rotatedLongAgo(s.refreshToken)
    await expectProblem(await refresh(s.refreshToken), 401, 'invalid_api_key')
    await expectProblem(await api('/v1/usage', { key: pair.accessToken }), 401, 'invalid_api_key')
    await expectProblem(await refresh(pair.refreshToken), 401, 'invalid_api_key')
  })

  it('refresh tokens are stored hashed and expire', async () => {
    const s = await signIn()
    const hash = await sha256Hex(s.refreshToken)
    const row = await env.DB.prepare('SELECT * FROM refresh_tokens WHERE hash = ?')
      .bind(hash)
      .first<Record<string, string>>()
    expect(row).not.toBeNull()
    expect(JSON.stringify(row)).not.toContain(s.refreshToken.slice(3))
    const ttl = Date.parse(row!.expires_at) - Date.parse(row!.created_at)
    expect(ttl).toBe(30 * 86_400_000)
    await env.DB.prepare('UPDATE refresh_tokens SET expires_at = ? WHERE hash = ?')
      .bind(new Date(Date.now() - 1).toISOString(), hash)
      .run()
    await expectProblem(await refresh(s.refreshToken), 401, 'invalid_api_key')
  })

  it('refresh without a token, or with a made-up one, is 401', async () => {
    await expectProblem(await refresh(), 401, 'invalid_api_key')
    await expectProblem(await api('/v1/auth/refresh', { method: 'POST' }), 401, 'invalid_api_key')
    await expectProblem(await refresh(`rt_${'A'.repeat(43)}`), 401, 'invalid_api_key')
    await expectProblem(await refresh('nonsense'), 401, 'invalid_api_key')
  })

  it('logout with the refresh token revokes the session and its access token', async () => {
    const s = await signIn()
    const res = await api('/v1/auth/logout', { method: 'POST', json: { refreshToken: s.refreshToken } })
    expect(res.status).toBe(204)
    await expectProblem(await refresh(s.refreshToken), 401, 'invalid_api_key')
    await expectProblem(await api('/v1/usage', { key: s.accessToken }), 401, 'invalid_api_key')
  })

  it('logout with the access token alone revokes the session', async () => {
    const s = await signIn()
    expect((await api('/v1/auth/logout', { method: 'POST', key: s.accessToken })).status).toBe(204)
    await expectProblem(await refresh(s.refreshToken), 401, 'invalid_api_key')
    await expectProblem(await api('/v1/jobs', { key: s.accessToken }), 401, 'invalid_api_key')
  })

  it('logout without a credential is 401; with an API key it is 400', async () => {
    await expectProblem(await api('/v1/auth/logout', { method: 'POST' }), 401, 'invalid_api_key')
    const { key } = await seedWorkspace()
    await expectProblem(await api('/v1/auth/logout', { method: 'POST', key }), 400, 'invalid_input', 'refreshToken')
  })

  it('a session carries every scope of its workspace', async () => {
    const s = await signIn()
    expect((await api('/v1/api-keys', { key: s.accessToken })).status).toBe(200)
    expect((await api('/v1/webhooks', { key: s.accessToken })).status).toBe(200)
    const payload = JSON.parse(atob(s.accessToken.split('.')[1].replaceAll('-', '+').replaceAll('_', '/')))
    expect(payload).toMatchObject({
      sub: s.user.id,
      wid: s.workspace.id,
      iss: 'cutout',
      aud: 'cutout-api',
      scp: ['images:write', 'jobs:read', 'webhooks:write', 'keys:write', 'tryon:write'],
    })
    expect(payload.exp - payload.iat).toBe(3600)
  })
})

describe('access token verification', () => {
  it('accepts a token made the way the service makes them', async () => {
    const s = await signIn()
    expect((await api('/v1/usage', { key: await forge(s) })).status).toBe(200)
  })

  it('rejects alg none', async () => {
    const s = await signIn()
    const payload = JSON.parse(atob(s.accessToken.split('.')[1].replaceAll('-', '+').replaceAll('_', '/')))
    const unsigned = new UnsecuredJWT(payload).encode()
    await expectProblem(await api('/v1/usage', { key: unsigned }), 401, 'invalid_api_key')
    // Also with a typ header and the original signature stripped by hand.
    const [, body] = s.accessToken.split('.')
    const noneHeader = btoa(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).replace(/=+$/, '')
    await expectProblem(await api('/v1/usage', { key: `${noneHeader}.${body}.` }), 401, 'invalid_api_key')
  })

  it('rejects another key, a tampered payload, an expired token, a wrong iss, aud or typ', async () => {
    const s = await signIn()
    const cases = [
      await forge(s, { key: new TextEncoder().encode('another-key-0123456789abcdef0123456789') }),
      await forge(s, { exp: Math.floor(Date.now() / 1000) - 5 }),
      await forge(s, { iss: 'someone-else' }),
      await forge(s, { aud: 'another-api' }),
      await forge(s, { typ: null }),
      await forge(s, { typ: 'JWT' }),
    ]
    const [h, , sig] = s.accessToken.split('.')
    const tampered = btoa(JSON.stringify({ sub: s.user.id, wid: crypto.randomUUID(), sid: 'x', scp: [] })).replace(
      /=+$/,
      '',
    )
    cases.push(`${h}.${tampered}.${sig}`)
    for (const token of cases) await expectProblem(await api('/v1/usage', { key: token }), 401, 'invalid_api_key')
  })

  it('rejects a valid signature for a workspace the user is not a member of', async () => {
    const s = await signIn()
    const other = await seedWorkspace()
    const payload = JSON.parse(atob(s.accessToken.split('.')[1].replaceAll('-', '+').replaceAll('_', '/')))
    const token = await new SignJWT({ wid: other.workspaceId, sid: payload.sid, scp: payload.scp })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setSubject(s.user.id)
      .setIssuer('cutout')
      .setAudience('cutout-api')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(KEY())
    await expectProblem(await api('/v1/usage', { key: token }), 401, 'invalid_api_key')
  })
})

describe('EmailSender', () => {
  it('builds an RFC 5322 text/plain message', () => {
    const raw = buildMimeMessage({
      from: 'no-reply@cutout.dev',
      to: 'ada@example.com',
      subject: 'Your sign-in code: 123456',
      text: 'Line one\nLine two',
      date: new Date('2026-01-02T03:04:05Z'),
      messageId: 'fixed',
    })
    const [head, body] = raw.split('\r\n\r\n')
    expect(head.split('\r\n')).toEqual([
      'From: no-reply@cutout.dev',
      'To: ada@example.com',
      'Subject: Your sign-in code: 123456',
      'Date: Fri, 02 Jan 2026 03:04:05 +0000',
      'Message-ID: <fixed@cutout.dev>',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
    ])
    expect(atob(body.trim())).toBe('Line one\r\nLine two')
    expect(buildMimeMessage({ from: 'a@b.c', to: 'd@e.f', subject: 'Grüße', text: '' })).toContain(
      'Subject: =?UTF-8?B?R3LDvMOfZQ==?=',
    )
    expect(() => buildMimeMessage({ from: 'a@b.c', to: 'd@e.f\r\nBcc: x@y.z', subject: 's', text: '' })).toThrow(
      /line breaks/,
    )
  })

  it('sends through the send_email binding with an EmailMessage', async () => {
    const sent: { from: string; to: string }[] = []
    const binding = { send: async (m: { from: string; to: string }) => void sent.push({ from: m.from, to: m.to }) }
    await new SendEmailBindingSender(binding as unknown as SendEmail, 'no-reply@cutout.dev').send({
      to: 'ada@example.com',
      subject: 's',
      text: 't',
    })
    expect(sent).toEqual([{ from: 'no-reply@cutout.dev', to: 'ada@example.com' }])
  })

  it('picks the binding when present, the outbox locally, and refuses production without a binding', () => {
    const fake = { send: async () => ({}) } as unknown as SendEmail
    expect(emailSenderFor({ ...env, EMAIL: fake })).toBeInstanceOf(SendEmailBindingSender)
    expect(emailSenderFor({ ...env, ENVIRONMENT: 'development' })).toBeInstanceOf(DevOutboxSender)
    expect(() => emailSenderFor({ ...env, ENVIRONMENT: 'production' })).toThrow(/not configured/)
  })

  it('the dev outbox is readable only in development and test', async () => {
    const app = createApp()
    const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext
    // A full URL: a problem's `type` is on the request's own origin when DOCS_URL is empty.
    const prod = await app.request(`${BASE}/v1/dev/outbox`, {}, { ...env, ENVIRONMENT: 'production' }, ctx)
    await expectProblem(prod, 404, 'route_not_found')
    const dev = await app.request(`${BASE}/v1/dev/outbox`, {}, { ...env, ENVIRONMENT: 'development' }, ctx)
    expect(dev.status).toBe(200)
    expect(await api('/v1/dev/outbox').then((r) => r.status)).toBe(200)
  })
})
