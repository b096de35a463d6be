/**
 * @module
 * Sessions (DESIGN.md §3): a short access token and a rotating refresh token.
 *
 * - The access token is a JWT (jose, HS256 over `SESSION_SIGNING_KEY`, 1 h): `sub` user id, `wid`
 *   workspace id, `sid` session id, `scp` scopes, `iss`/`aud`, header `typ: at+jwt` (RFC 9068), so
 *   no other token signed with the same key (the device cookie) can pass for one.
 * - The refresh token is opaque (`rt_` + 32 random bytes base64url), stored as SHA-256, valid 30
 *   days and used once: each refresh replaces it in its family (the session). Presenting a token
 *   that was already exchanged is reuse — someone holds a copy — so the whole session is revoked,
 *   unless it comes within `REFRESH_REUSE_WINDOW_MS` of the exchange: refreshes that race (a page's
 *   parallel requests, two tabs, two CLI processes sharing a session file) all get the pair the
 *   first one got (DESIGN.md §3 Session refresh races). The successor of a token is an HMAC of it
 *   under the session key, so the pair can be answered again without storing a token in clear.
 * - A session row is checked on every request made with its access token, so logout and reuse
 *   detection end the access token at once rather than at its expiry.
 */
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import type { Env } from '../env'
import { ApiError } from '../errors'
import { hmacBase64Url, randomToken, sha256Hex } from '../lib/crypto'
import { DAY_MS, iso } from '../lib/time'
import { SCOPES, type AuthContext, type Scope } from './auth'
import type { refreshTokens, sessions } from '../db/schema'
import type { D1Row } from '../db/rows'

export const ACCESS_TOKEN_TTL_SECONDS = 3600
export const REFRESH_TOKEN_TTL_MS = 30 * DAY_MS
export const REFRESH_TOKEN_PREFIX = 'rt_'
export const TOKEN_ISSUER = 'cutout'
export const TOKEN_AUDIENCE = 'cutout-api'
export const ACCESS_TOKEN_TYPE = 'at+jwt'
/**
 * How long a rotated refresh token still answers with its successor instead of counting as reuse.
 * Long enough for requests that raced the rotation, or whose answer was lost on a bad network, to
 * arrive (Okta's grace period defaults to 30 s); short enough that a copy replayed later, by
 * whoever stole it, still ends the session.
 */
export const REFRESH_REUSE_WINDOW_MS = 30_000
/** Successors chained within the window (a token rotated twice in 30 s); more is not a race. */
const MAX_SUCCESSOR_HOPS = 4

/** What sign-in, refresh and the device flow hand to a client. */
export interface TokenPair {
  accessToken: string
  refreshToken: string
  tokenType: 'Bearer'
  expiresIn: number
}

export interface SessionSubject {
  userId: string
  workspaceId: string
  method: 'email' | 'device'
  client?: string | null
}

const signingKey = (env: Pick<Env, 'SESSION_SIGNING_KEY'>): Uint8Array => {
  if (!env.SESSION_SIGNING_KEY) {
    throw new ApiError('processing_failed', 'Sign-in is not configured: SESSION_SIGNING_KEY is missing')
  }
  return new TextEncoder().encode(env.SESSION_SIGNING_KEY)
}

const invalidSession = (detail = 'The session token is not valid') => new ApiError('invalid_api_key', detail)

/** Signs an access token for a session. Session tokens carry every scope (DESIGN.md §3). */
export async function signAccessToken(
  env: Pick<Env, 'SESSION_SIGNING_KEY'>,
  claims: { userId: string; workspaceId: string; sessionId: string; scopes?: readonly Scope[] },
): Promise<string> {
  return new SignJWT({ wid: claims.workspaceId, sid: claims.sessionId, scp: [...(claims.scopes ?? SCOPES)] })
    .setProtectedHeader({ alg: 'HS256', typ: ACCESS_TOKEN_TYPE })
    .setSubject(claims.userId)
    .setIssuer(TOKEN_ISSUER)
    .setAudience(TOKEN_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${ACCESS_TOKEN_TTL_SECONDS}s`)
    .sign(signingKey(env))
}

/**
 * Resolves an access token to its workspace, or throws 401 `invalid_api_key`: a bad signature,
 * any algorithm but HS256 (so `none`), another issuer or audience, an expired token, or a session
 * that was revoked or whose user is no longer a member of the workspace.
 */
export async function verifyAccessToken(env: Env, token: string): Promise<AuthContext> {
  if (!env.SESSION_SIGNING_KEY) throw invalidSession()
  let payload: Record<string, unknown>
  try {
    ;({ payload } = await jwtVerify(token, signingKey(env), {
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      typ: ACCESS_TOKEN_TYPE,
      requiredClaims: ['sub', 'exp', 'iat'],
    }))
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw invalidSession('The session token has expired; refresh it')
    throw invalidSession()
  }
  const { sub, wid, sid, scp } = payload
  if (typeof sub !== 'string' || typeof wid !== 'string' || typeof sid !== 'string' || !Array.isArray(scp)) {
    throw invalidSession()
  }
  const live = await env.DB.prepare(
    `SELECT 1 AS ok FROM sessions s
       JOIN workspace_members m ON m.workspace_id = s.workspace_id AND m.user_id = s.user_id
      WHERE s.id = ? AND s.user_id = ? AND s.workspace_id = ? AND s.revoked_at IS NULL`,
  )
    .bind(sid, sub, wid)
    .first()
  if (!live) throw invalidSession('The session has ended; sign in again')
  const scopes = SCOPES.filter((s) => scp.includes(s))
  return { kind: 'session', workspaceId: wid, keyId: sid, sessionId: sid, userId: sub, scopes }
}

const newRefreshToken = () => REFRESH_TOKEN_PREFIX + randomToken(32)

/**
 * The token that replaces `refreshToken` when it is exchanged: fixed by the token and the session
 * key (domain-separated from the access tokens' JWT signatures, which sign `eyJ…`), so a refresh
 * that lost a race recomputes the pair the winner got. Unguessable without both.
 */
const successorOf = async (env: Pick<Env, 'SESSION_SIGNING_KEY'>, refreshToken: string) => {
  if (!env.SESSION_SIGNING_KEY) throw invalidSession()
  return REFRESH_TOKEN_PREFIX + (await hmacBase64Url(env.SESSION_SIGNING_KEY, `refresh-successor:${refreshToken}`))
}

function insertRefreshToken(db: D1Database, sessionId: string, hash: string, now: number) {
  return db
    .prepare('INSERT INTO refresh_tokens (id, session_id, hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)')
    .bind(crypto.randomUUID(), sessionId, hash, iso(now + REFRESH_TOKEN_TTL_MS), iso(now))
}

/** Opens a session for a member of a workspace and returns its first token pair. */
export async function startSession(env: Env, subject: SessionSubject): Promise<TokenPair> {
  const sessionId = crypto.randomUUID()
  const refreshToken = newRefreshToken()
  const now = Date.now()
  await env.DB.batch([
    env.DB.prepare(
      'INSERT INTO sessions (id, user_id, workspace_id, method, client, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).bind(sessionId, subject.userId, subject.workspaceId, subject.method, subject.client ?? null, iso(now)),
    insertRefreshToken(env.DB, sessionId, await sha256Hex(refreshToken), now),
  ])
  return {
    accessToken: await signAccessToken(env, { userId: subject.userId, workspaceId: subject.workspaceId, sessionId }),
    refreshToken,
    tokenType: 'Bearer',
    expiresIn: ACCESS_TOKEN_TTL_SECONDS,
  }
}

/** Ends a session: every refresh token of the family and every access token of it stop working. */
export async function revokeSession(db: D1Database, sessionId: string, reason: 'logout' | 'reuse'): Promise<void> {
  await db
    .prepare('UPDATE sessions SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL')
    .bind(iso(), reason, sessionId)
    .run()
}

/** A refresh token joined with its session, and whether the user is still a member of the workspace. */
type RefreshRow = Pick<D1Row<typeof refreshTokens>, 'id' | 'session_id' | 'expires_at' | 'used_at'> &
  Pick<D1Row<typeof sessions>, 'user_id' | 'workspace_id' | 'revoked_at'> & { member: 1 | null }

const withinReuseWindow = (usedAt: string, now = Date.now()) => now - Date.parse(usedAt) <= REFRESH_REUSE_WINDOW_MS

const reuse = async (db: D1Database, sessionId: string) => {
  await revokeSession(db, sessionId, 'reuse')
  return invalidSession('The refresh token was already used; the session is revoked, sign in again')
}

const pairFor = async (env: Env, row: RefreshRow, refreshToken: string): Promise<TokenPair> => ({
  accessToken: await signAccessToken(env, {
    userId: row.user_id,
    workspaceId: row.workspace_id,
    sessionId: row.session_id,
  }),
  refreshToken,
  tokenType: 'Bearer',
  expiresIn: ACCESS_TOKEN_TTL_SECONDS,
})

/**
 * Exchanges a refresh token for a new pair. The old token is marked used in the same D1 batch that
 * writes its successor, guarded by `used_at IS NULL`, so of two concurrent refreshes with one token
 * exactly one rotates; the other, like any presentation within the reuse window, is answered with
 * the family's current token. Past the window a used token is reuse and ends the session.
 */
export async function refreshSession(env: Env, refreshToken: string | undefined): Promise<TokenPair> {
  if (!refreshToken) throw invalidSession('Expected a refreshToken')
  if (!refreshToken.startsWith(REFRESH_TOKEN_PREFIX)) throw invalidSession('The refresh token is not valid')
  const row = await findRefreshToken(env.DB, refreshToken)
  if (!row) throw invalidSession('The refresh token is not valid')
  if (row.revoked_at) throw invalidSession('The session has ended; sign in again')
  if (Date.parse(row.expires_at) <= Date.now()) throw invalidSession('The refresh token has expired; sign in again')
  if (!row.member) {
    await revokeSession(env.DB, row.session_id, 'logout')
    throw invalidSession('The session has ended; sign in again')
  }
  if (row.used_at) return answerRace(env, row, refreshToken)

  const next = await successorOf(env, refreshToken)
  const now = Date.now()
  const [marked] = await env.DB.batch([
    env.DB.prepare(
      `UPDATE refresh_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL
          AND (SELECT revoked_at FROM sessions WHERE id = ?) IS NULL`,
    ).bind(iso(now), row.id, row.session_id),
    env.DB.prepare(
      'INSERT INTO refresh_tokens (id, session_id, hash, expires_at, created_at) SELECT ?, ?, ?, ?, ? WHERE changes() = 1',
    ).bind(crypto.randomUUID(), row.session_id, await sha256Hex(next), iso(now + REFRESH_TOKEN_TTL_MS), iso(now)),
  ])
  if (marked.meta.changes) return pairFor(env, row, next)
  // Another refresh with this token won the race (or the session was revoked meanwhile): read again.
  const after = await findRefreshToken(env.DB, refreshToken)
  if (!after || after.revoked_at || !after.used_at) throw invalidSession('The session has ended; sign in again')
  return answerRace(env, after, refreshToken)
}

/**
 * A used token presented again: within the reuse window, the family's newest token (following
 * successors that were themselves rotated within their window) with a fresh access token; after
 * it, reuse.
 */
async function answerRace(env: Env, row: RefreshRow, refreshToken: string): Promise<TokenPair> {
  let used = row.used_at
  let token = refreshToken
  for (let hop = 0; hop < MAX_SUCCESSOR_HOPS && used && withinReuseWindow(used); hop++) {
    token = await successorOf(env, token)
    const successor = await env.DB.prepare('SELECT used_at FROM refresh_tokens WHERE hash = ? AND session_id = ?')
      .bind(await sha256Hex(token), row.session_id)
      .first<{ used_at: string | null }>()
    if (!successor) break
    if (!successor.used_at) return pairFor(env, row, token)
    used = successor.used_at
  }
  throw await reuse(env.DB, row.session_id)
}

async function findRefreshToken(db: D1Database, refreshToken: string): Promise<RefreshRow | null> {
  return db
    .prepare(
      `SELECT rt.id, rt.session_id, rt.expires_at, rt.used_at, s.user_id, s.workspace_id, s.revoked_at,
              (SELECT 1 FROM workspace_members m WHERE m.workspace_id = s.workspace_id AND m.user_id = s.user_id) AS member
         FROM refresh_tokens rt JOIN sessions s ON s.id = rt.session_id
        WHERE rt.hash = ?`,
    )
    .bind(await sha256Hex(refreshToken))
    .first<RefreshRow>()
}

/**
 * Logout: revokes the session named by a refresh token (any of its family, used or not) or by the
 * session access token that authenticated the call. An unknown refresh token is accepted silently
 * (RFC 7009 §2.2: revocation is idempotent and no oracle for token validity).
 */
export async function logout(env: Env, opts: { refreshToken?: string; auth?: AuthContext }): Promise<void> {
  if (opts.refreshToken) {
    const row = await env.DB.prepare('SELECT session_id FROM refresh_tokens WHERE hash = ?')
      .bind(await sha256Hex(opts.refreshToken))
      .first<{ session_id: string }>()
    if (row) await revokeSession(env.DB, row.session_id, 'logout')
    return
  }
  if (opts.auth?.kind === 'session' && opts.auth.sessionId) {
    await revokeSession(env.DB, opts.auth.sessionId, 'logout')
    return
  }
  if (opts.auth) {
    throw new ApiError('invalid_input', 'Logout ends a session; revoke an API key with DELETE /v1/api-keys/{id}', {
      field: 'refreshToken',
    })
  }
  throw invalidSession('Expected a refreshToken or a session access token')
}
