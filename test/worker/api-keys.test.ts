import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/lib/crypto'
import { SCOPES } from '../../src/services/auth'
import { signIn } from './auth-helpers'
import { api, expectProblem, seedWorkspace } from './helpers'

type Key = {
  id: string
  name: string
  prefix: string
  scopes: string[]
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  value?: string
}

const createKey = (key: string, json?: unknown) => api('/v1/api-keys', { method: 'POST', key, json })
const listKeys = async (key: string) => ((await (await api('/v1/api-keys', { key })).json()) as { keys: Key[] }).keys
const deleteKey = (key: string, id: string) => api(`/v1/api-keys/${id}`, { method: 'DELETE', key })

async function waitForLastUsed(id: string, not: string | null, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?')
      .bind(id)
      .first<{ last_used_at: string | null }>()
    if (row?.last_used_at && row.last_used_at !== not) return row.last_used_at
    if (Date.now() > deadline) throw new Error(`last_used_at of ${id} still ${row?.last_used_at}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('POST /v1/api-keys', () => {
  it('returns the value once, stores only its hash, and keeps the first 12 characters as prefix', async () => {
    const owner = await seedWorkspace()
    const res = await createKey(owner.key, { name: 'CI' })
    expect(res.status).toBe(201)
    const created = (await res.json()) as Key
    expect(created.value).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/)
    expect(created).toMatchObject({
      name: 'CI',
      prefix: created.value!.slice(0, 12),
      scopes: [...SCOPES],
      expiresAt: null,
      lastUsedAt: null,
    })
    const row = await env.DB.prepare('SELECT * FROM api_keys WHERE id = ?')
      .bind(created.id)
      .first<Record<string, string>>()
    expect(row!.hash).toBe(await sha256Hex(created.value!))
    expect(JSON.stringify(row)).not.toContain(created.value!.slice(12))
    const listed = (await listKeys(owner.key)).find((k) => k.id === created.id)
    expect(listed).toEqual({ ...created, value: undefined, lastUsedAt: null })
    expect(listed).not.toHaveProperty('value')
    expect((await api('/v1/jobs', { key: created.value })).status).toBe(200)
  })

  it("defaults to the caller's scopes and accepts an empty body", async () => {
    const caller = await seedWorkspace({ scopes: ['keys:write', 'jobs:read'] })
    const res = await api('/v1/api-keys', { method: 'POST', key: caller.key })
    expect(res.status).toBe(201)
    expect((await res.json()) as Key).toMatchObject({ name: '', scopes: ['keys:write', 'jobs:read'] })
  })

  it('only grants scopes the caller holds', async () => {
    const caller = await seedWorkspace({ scopes: ['keys:write', 'jobs:read'] })
    const narrower = await createKey(caller.key, { scopes: ['jobs:read'] })
    expect(narrower.status).toBe(201)
    const key = (await narrower.json()) as Key
    expect(key.scopes).toEqual(['jobs:read'])
    await expectProblem(await api('/v1/uploads', { method: 'POST', key: key.value }), 403, 'insufficient_scope')
    await expectProblem(
      await createKey(caller.key, { scopes: ['jobs:read', 'images:write'] }),
      403,
      'insufficient_scope',
    )
    await expectProblem(await createKey(caller.key, { scopes: ['admin'] }), 400, 'invalid_input', 'scopes.0')
    await expectProblem(await createKey(caller.key, { scopes: [] }), 400, 'invalid_input', 'scopes')
  })

  it('limits the name to 80 characters and rejects unknown fields', async () => {
    const { key } = await seedWorkspace()
    expect((await createKey(key, { name: 'n'.repeat(80) })).status).toBe(201)
    await expectProblem(await createKey(key, { name: 'n'.repeat(81) }), 400, 'invalid_input', 'name')
    await expectProblem(await createKey(key, { name: 'x', admin: true }), 400, 'invalid_input', 'admin')
  })

  it('takes an expiry in the future; the key stops working after it', async () => {
    const { key } = await seedWorkspace()
    await expectProblem(
      await createKey(key, { expiresAt: new Date(Date.now() - 60_000).toISOString() }),
      400,
      'invalid_input',
      'expiresAt',
    )
    await expectProblem(await createKey(key, { expiresAt: 'tomorrow' }), 400, 'invalid_input', 'expiresAt')
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const created = (await (await createKey(key, { expiresAt })).json()) as Key
    expect(created.expiresAt).toBe(expiresAt)
    expect((await api('/v1/jobs', { key: created.value })).status).toBe(200)
    await env.DB.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?')
      .bind(new Date(Date.now() - 1).toISOString(), created.id)
      .run()
    await expectProblem(await api('/v1/jobs', { key: created.value }), 401, 'invalid_api_key')
  })
})

describe('a child key never outlives its parent', () => {
  it('inherits the calling key’s expiry; a later one is 400 expiresAt, an earlier one is kept', async () => {
    const parentExpiresAt = new Date(Date.now() + 60_000).toISOString()
    const { key } = await seedWorkspace({ expiresAt: parentExpiresAt })
    const inherited = (await (await createKey(key, { name: 'child' })).json()) as Key
    expect(inherited.expiresAt).toBe(parentExpiresAt)
    const later = new Date(Date.parse(parentExpiresAt) + 1000).toISOString()
    const refused = await expectProblem(await createKey(key, { expiresAt: later }), 400, 'invalid_input', 'expiresAt')
    expect(refused.detail).toBe(
      `Expected a date-time no later than ${parentExpiresAt} (when the calling key expires) for expiresAt but received ${later}`,
    )
    // The grandchild inherits too: the limit passes down the chain.
    const grandchild = (await (await createKey(inherited.value!, {})).json()) as Key
    expect(grandchild.expiresAt).toBe(parentExpiresAt)
    const earlier = new Date(Date.now() + 30_000).toISOString()
    expect(((await (await createKey(key, { expiresAt: earlier })).json()) as Key).expiresAt).toBe(earlier)
    expect(((await (await createKey(key, { expiresAt: parentExpiresAt })).json()) as Key).expiresAt).toBe(
      parentExpiresAt,
    )
  })

  it('a session (no parent key) and a key without expiry pass no limit on', async () => {
    const { key } = await seedWorkspace()
    expect(((await (await createKey(key, {})).json()) as Key).expiresAt).toBeNull()
    const s = await signIn()
    expect(((await (await createKey(s.accessToken, {})).json()) as Key).expiresAt).toBeNull()
    const far = '2099-01-01T00:00:00.000Z'
    expect(((await (await createKey(s.accessToken, { expiresAt: far })).json()) as Key).expiresAt).toBe(far)
  })
})

describe('API key management needs keys:write', () => {
  it('403 without the scope, 401 without a credential', async () => {
    const { key } = await seedWorkspace({ scopes: ['images:write', 'jobs:read', 'webhooks:write', 'tryon:write'] })
    await expectProblem(await api('/v1/api-keys', { key }), 403, 'insufficient_scope')
    await expectProblem(await createKey(key, {}), 403, 'insufficient_scope')
    await expectProblem(await deleteKey(key, crypto.randomUUID()), 403, 'insufficient_scope')
    await expectProblem(await api('/v1/api-keys'), 401, 'invalid_api_key')
  })

  it('a signed-in session manages its workspace keys', async () => {
    const s = await signIn()
    const created = (await (await createKey(s.accessToken, { name: 'from session' })).json()) as Key
    expect(created.scopes).toEqual([...SCOPES])
    expect((await listKeys(s.accessToken)).map((k) => k.id)).toEqual([created.id])
    expect((await deleteKey(s.accessToken, created.id)).status).toBe(204)
  })
})

describe('DELETE /v1/api-keys/{id}', () => {
  it('revokes at once: the very next request with the key is 401', async () => {
    const owner = await seedWorkspace()
    const created = (await (await createKey(owner.key, {})).json()) as Key
    expect((await api('/v1/jobs', { key: created.value })).status).toBe(200)
    const del = await deleteKey(owner.key, created.id)
    expect(del.status).toBe(204)
    expect(await del.text()).toBe('')
    await expectProblem(await api('/v1/jobs', { key: created.value }), 401, 'invalid_api_key')
    expect((await listKeys(owner.key)).map((k) => k.id)).not.toContain(created.id)
    await expectProblem(await deleteKey(owner.key, created.id), 404, 'api_key_not_found')
  })

  it("another workspace's key is 404 and keeps working", async () => {
    const a = await seedWorkspace()
    const b = await seedWorkspace()
    const bKey = (await (await createKey(b.key, {})).json()) as Key
    await expectProblem(await deleteKey(a.key, bKey.id), 404, 'api_key_not_found')
    expect((await listKeys(a.key)).map((k) => k.id)).not.toContain(bKey.id)
    expect((await api('/v1/jobs', { key: bKey.value })).status).toBe(200)
    await expectProblem(await deleteKey(a.key, 'not-a-uuid'), 400, 'invalid_input', 'id')
  })

  it('rotation: create the new key, switch, delete the old; no request fails in between', async () => {
    const owner = await seedWorkspace()
    const old = (await (await createKey(owner.key, { name: 'v1' })).json()) as Key
    expect((await api('/v1/jobs', { key: old.value })).status).toBe(200)
    const next = (await (await createKey(old.value!, { name: 'v2' })).json()) as Key
    expect((await api('/v1/jobs', { key: old.value })).status).toBe(200)
    expect((await api('/v1/jobs', { key: next.value })).status).toBe(200)
    expect((await deleteKey(next.value!, old.id)).status).toBe(204)
    await expectProblem(await api('/v1/jobs', { key: old.value }), 401, 'invalid_api_key')
    expect((await api('/v1/jobs', { key: next.value })).status).toBe(200)
  })
})

describe('lastUsedAt', () => {
  it('is set on use and written at most once a minute', async () => {
    const owner = await seedWorkspace()
    const created = (await (await createKey(owner.key, {})).json()) as Key
    expect(created.lastUsedAt).toBeNull()
    await api('/v1/jobs', { key: created.value })
    const first = await waitForLastUsed(created.id, null)
    // The time of that use: now, give or take how long the write took to show (a busy machine).
    expect(Math.abs(Date.parse(first) - Date.now())).toBeLessThan(60_000)
    await api('/v1/jobs', { key: created.value })
    await api('/v1/jobs', { key: created.value })
    await new Promise((r) => setTimeout(r, 200))
    const row = await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?')
      .bind(created.id)
      .first<{ last_used_at: string }>()
    expect(row!.last_used_at).toBe(first)
    // A minute later the next use records again.
    const older = new Date(Date.now() - 61_000).toISOString()
    await env.DB.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').bind(older, created.id).run()
    await api('/v1/jobs', { key: created.value })
    const second = await waitForLastUsed(created.id, older)
    expect(Date.parse(second)).toBeGreaterThan(Date.parse(older))
    expect((await listKeys(owner.key)).find((k) => k.id === created.id)?.lastUsedAt).toBe(second)
  })
})
