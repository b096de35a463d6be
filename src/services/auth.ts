/**
 * @module
 * API-key authentication: `sk_live_` keys checked against SHA-256 hashes in D1 (DESIGN.md §3).
 */
import { ApiError } from '../errors'
import { randomToken, sha256Hex } from '../lib/crypto'

export const API_KEY_PREFIX = 'sk_live_'
/** Characters of the key kept in clear as its `prefix`, enough to tell keys apart in a list. */
export const KEY_PREFIX_LENGTH = 12

export const SCOPES = ['images:write', 'jobs:read', 'webhooks:write', 'keys:write', 'tryon:write'] as const
export type Scope = (typeof SCOPES)[number]

export interface AuthContext {
  workspaceId: string
  keyId: string
  scopes: Scope[]
}

/** Makes a new key: the value (shown once) and what is stored. */
export async function mintApiKey(): Promise<{ value: string; prefix: string; hash: string }> {
  const value = API_KEY_PREFIX + randomToken(32)
  return { value, prefix: value.slice(0, KEY_PREFIX_LENGTH), hash: await sha256Hex(value) }
}

type KeyRow = {
  id: string
  workspace_id: string
  scopes: string
  expires_at: string | null
  revoked_at: string | null
}

/**
 * Resolves a bearer token to its workspace, or throws 401 `invalid_api_key` for an absent,
 * unknown, expired or revoked key.
 */
export async function authenticateApiKey(db: D1Database, token: string | undefined): Promise<AuthContext> {
  if (!token || !token.startsWith(API_KEY_PREFIX)) {
    throw new ApiError('invalid_api_key', 'Expected an API key in Authorization: Bearer sk_live_…')
  }
  const row = await db
    .prepare('SELECT id, workspace_id, scopes, expires_at, revoked_at FROM api_keys WHERE hash = ?')
    .bind(await sha256Hex(token))
    .first<KeyRow>()
  if (!row || row.revoked_at) throw new ApiError('invalid_api_key', 'The API key is not valid')
  if (row.expires_at && Date.parse(row.expires_at) <= Date.now()) {
    throw new ApiError('invalid_api_key', 'The API key has expired')
  }
  return { workspaceId: row.workspace_id, keyId: row.id, scopes: JSON.parse(row.scopes) as Scope[] }
}

export function assertScopes(auth: AuthContext, required: readonly Scope[]): void {
  const missing = required.filter((s) => !auth.scopes.includes(s))
  if (missing.length) {
    throw new ApiError('insufficient_scope', `The API key lacks the scope ${missing.join(', ')}`)
  }
}
