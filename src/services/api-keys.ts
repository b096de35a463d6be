/**
 * @module
 * API key management (SPEC.md §4 API keys): list, create (the secret shown once), revoke.
 * A caller can hand out only scopes it holds; revocation takes effect on the very next request,
 * because every request reads the key row.
 */
import { ApiError } from '../errors'
import { iso } from '../lib/time'
import { mintApiKey, type AuthContext, type Scope } from './auth'
import type { apiKeys } from '../db/schema'
import type { D1Row } from '../db/rows'

export interface ApiKey {
  id: string
  name: string
  prefix: string
  scopes: Scope[]
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
}

type KeyRow = Pick<
  D1Row<typeof apiKeys>,
  'id' | 'name' | 'prefix' | 'scopes' | 'created_at' | 'expires_at' | 'last_used_at'
>

const toApiKey = (r: KeyRow): ApiKey => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  scopes: JSON.parse(r.scopes) as Scope[],
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
})

/** The workspace's keys that are not revoked (expired ones included, so they can be cleaned up), newest first. */
export async function listApiKeys(db: D1Database, workspaceId: string): Promise<ApiKey[]> {
  const { results } = await db
    .prepare(
      `SELECT id, name, prefix, scopes, created_at, expires_at, last_used_at FROM api_keys
        WHERE workspace_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id`,
    )
    .bind(workspaceId)
    .all<KeyRow>()
  return results.map(toApiKey)
}

export interface CreateApiKeyInput {
  name?: string
  scopes?: Scope[]
  expiresAt?: string
}

/**
 * Creates a key in the caller's workspace. Scopes default to the caller's own; asking for one the
 * caller lacks is 403 `insufficient_scope` (a key cannot mint a stronger key). Likewise a key
 * cannot mint a longer-lived one: see `childExpiry`.
 */
export async function createApiKey(
  db: D1Database,
  auth: AuthContext,
  input: CreateApiKeyInput,
): Promise<ApiKey & { value: string }> {
  const scopes = [...new Set(input.scopes ?? auth.scopes)]
  const missing = scopes.filter((s) => !auth.scopes.includes(s))
  if (missing.length) {
    throw new ApiError('insufficient_scope', `Cannot grant ${missing.join(', ')}: the caller does not hold it`)
  }
  const expiresAt = childExpiry(input.expiresAt, await parentExpiry(db, auth))
  const key = await mintApiKey()
  const row: KeyRow = {
    id: crypto.randomUUID(),
    name: input.name ?? '',
    prefix: key.prefix,
    scopes: JSON.stringify(scopes),
    created_at: iso(),
    expires_at: expiresAt,
    last_used_at: null,
  }
  await db
    .prepare(
      `INSERT INTO api_keys (id, workspace_id, name, prefix, hash, scopes, expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(row.id, auth.workspaceId, row.name, row.prefix, key.hash, row.scopes, row.expires_at, row.created_at)
    .run()
  return { ...toApiKey(row), value: key.value }
}

/**
 * When the calling key itself expires (ms), or null: a session token (or a key without expiry)
 * passes no limit on. Read from the row, as `authenticateApiKey` does, rather than carried in the
 * auth context, so only key creation pays for it.
 */
async function parentExpiry(db: D1Database, auth: AuthContext): Promise<number | null> {
  if (auth.kind !== 'api_key') return null
  const row = await db
    .prepare('SELECT expires_at FROM api_keys WHERE id = ?')
    .bind(auth.keyId)
    .first<{ expires_at: string | null }>()
  return row?.expires_at ? Date.parse(row.expires_at) : null
}

/**
 * A new key's expiry: the one asked for, which must be in the future and no later than the
 * parent's (a child never outlives the key that made it); none asked for inherits the parent's.
 * A later one is refused, not clamped, so the caller never holds a key that dies sooner than it
 * was told (docs/decisions.md).
 */
function childExpiry(requested: string | undefined, parentMs: number | null): string | null {
  if (requested === undefined) return parentMs === null ? null : iso(parentMs)
  const ms = Date.parse(requested)
  if (!(ms > Date.now())) {
    throw new ApiError('invalid_input', `Expected a future date-time for expiresAt but received ${requested}`, {
      field: 'expiresAt',
    })
  }
  if (parentMs !== null && ms > parentMs) {
    throw new ApiError(
      'invalid_input',
      `Expected a date-time no later than ${iso(parentMs)} (when the calling key expires) for expiresAt but received ${requested}`,
      { field: 'expiresAt' },
    )
  }
  return iso(ms)
}

/** Revokes a key of the workspace at once. Unknown, another workspace's or already revoked → 404. */
export async function revokeApiKey(db: D1Database, workspaceId: string, id: string): Promise<void> {
  const res = await db
    .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL')
    .bind(iso(), id, workspaceId)
    .run()
  if (!res.meta.changes) throw new ApiError('api_key_not_found', `API key ${id} not found`)
}
