/**
 * @module
 * API-key authentication: `sk_live_` keys checked against SHA-256 hashes in D1 (DESIGN.md §3).
 * Session access tokens (JWTs) are verified in `./sessions`; both resolve to an `AuthContext`.
 */
import { ApiError } from '../errors'
import { randomToken, sha256Hex } from '../lib/crypto'

export const API_KEY_PREFIX = 'sk_live_'
/** What a request without a credential is told wherever it needs one (401 `invalid_api_key`). */
export const MISSING_CREDENTIAL = `Expected Authorization: Bearer with an API key (${API_KEY_PREFIX}…) or a session access token`
/** Characters of the key kept in clear as its `prefix`, enough to tell keys apart in a list. */
export const KEY_PREFIX_LENGTH = 12

import type { Scope } from '../lib/scopes'
import { log } from '../lib/log'
import type { apiKeys } from '../db/schema'
import type { D1Row } from '../db/rows'

export { SCOPES, type Scope } from '../lib/scopes'

/** Who is calling, resolved by `authorize` (or `requireSession`). */
export interface AuthContext {
  /**
   * `api_key`: an `sk_live_` key; `session`: a signed-in user's access token; `anonymous`: no
   * credential, acting as the device of the `__Host-device` cookie on an anonymous-capable route.
   */
  kind: 'api_key' | 'session' | 'anonymous'
  workspaceId: string
  /** The credential's id: the API key id, or the session id for a session token. */
  keyId: string
  scopes: Scope[]
  /** Set for sessions: the signed-in user. */
  userId?: string
  /** Set for sessions: the session (refresh-token family) the access token belongs to. */
  sessionId?: string
  /** Set for anonymous callers: the device id and the client address. */
  deviceId?: string
  clientIp?: string
}

/** How often `last_used_at` may be written per key: at most once a minute. */
export const LAST_USED_RESOLUTION_MS = 60_000

export interface AuthenticateOptions {
  /** `ExecutionContext.waitUntil`: the `last_used_at` write then runs after the response. */
  waitUntil?: (promise: Promise<unknown>) => void
}

/** Makes a new key: the value (shown once) and what is stored. */
export async function mintApiKey(): Promise<{ value: string; prefix: string; hash: string }> {
  const value = API_KEY_PREFIX + randomToken(32)
  return { value, prefix: value.slice(0, KEY_PREFIX_LENGTH), hash: await sha256Hex(value) }
}

type KeyRow = Pick<D1Row<typeof apiKeys>, 'id' | 'workspace_id' | 'scopes' | 'expires_at' | 'revoked_at'>

/**
 * Resolves a bearer token to its workspace, or throws 401 `invalid_api_key` for an absent,
 * unknown, expired or revoked key.
 */
export async function authenticateApiKey(
  db: D1Database,
  token: string | undefined,
  opts: AuthenticateOptions = {},
): Promise<AuthContext> {
  if (!token?.startsWith(API_KEY_PREFIX)) {
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
  const touch = touchApiKey(db, row.id)
  if (opts.waitUntil) opts.waitUntil(touch)
  else await touch
  return { kind: 'api_key', workspaceId: row.workspace_id, keyId: row.id, scopes: JSON.parse(row.scopes) as Scope[] }
}

/**
 * Records `last_used_at`, at most once a minute per key: the conditional UPDATE writes nothing
 * when the stored time is recent, so busy keys do not turn every request into a D1 write.
 * A failure is logged, never surfaced: it must not fail the request it describes.
 */
export async function touchApiKey(db: D1Database, keyId: string, now = Date.now()): Promise<void> {
  try {
    await db
      .prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)')
      .bind(new Date(now).toISOString(), keyId, new Date(now - LAST_USED_RESOLUTION_MS).toISOString())
      .run()
  } catch (err) {
    log('warn', 'last_used_at update failed', { keyId, error: String(err) })
  }
}

export function assertScopes(auth: AuthContext, required: readonly Scope[]): void {
  const missing = required.filter((s) => !auth.scopes.includes(s))
  if (missing.length) {
    const who = auth.kind === 'session' ? 'The session' : 'The API key'
    throw new ApiError('insufficient_scope', `${who} lacks the scope ${missing.join(', ')}`)
  }
}
