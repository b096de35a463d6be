/**
 * @module
 * Device authorization (RFC 8628 with SPEC.md codes, DESIGN.md §3): a CLI asks for a device code
 * and a user code, the user approves the user code in a signed-in browser session for one of their
 * workspaces, and the CLI polls the token endpoint until it receives its own session, once.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { randomToken, sha256Hex } from '../lib/crypto'
import { DAY_MS, iso } from '../lib/time'
import { startSession, type TokenPair } from './sessions'
import { isMember } from './users'
import type { deviceAuthorizations } from '../db/schema'
import type { D1Row } from '../db/rows'

export const DEVICE_CODE_TTL_SECONDS = 600
export const DEVICE_POLL_INTERVAL_SECONDS = 5
/** RFC 8628 §3.5: each slow_down adds five seconds to the interval. */
export const SLOW_DOWN_STEP_SECONDS = 5
export const DEVICE_CODE_PREFIX = 'dc_'
/**
 * RFC 8628 §6.1's alphabet: consonants only (no vowels, so no words) and no digits, so nothing
 * to confuse (0/O, 1/I/L, 5/S). 20^8 ≈ 2.6·10^10 codes.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
export const USER_CODE_LENGTH = 8

export interface DeviceAuthorization {
  deviceCode: string
  userCode: string
  verificationUri: string
  verificationUriComplete: string
  expiresIn: number
  interval: number
}

/** `XXXX-XXXX`, uniformly random over the alphabet (rejection sampling). */
export function generateUserCode(): string {
  const n = USER_CODE_ALPHABET.length
  const limit = 256 - (256 % n)
  let out = ''
  while (out.length < USER_CODE_LENGTH) {
    for (const b of crypto.getRandomValues(new Uint8Array(16))) {
      if (b < limit && out.length < USER_CODE_LENGTH) out += USER_CODE_ALPHABET[b % n]
    }
  }
  return `${out.slice(0, 4)}-${out.slice(4)}`
}

/** Accepts what a person types: any case, with or without the hyphen or spaces. */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]/g, '')
}

const formatUserCode = (stored: string) => `${stored.slice(0, 4)}-${stored.slice(4)}`

/** Creates a pending authorization for `client` (shown to the user when they approve). */
export async function createDeviceAuthorization(
  env: Env,
  client: string,
  origin: string,
): Promise<DeviceAuthorization> {
  const deviceCode = DEVICE_CODE_PREFIX + randomToken(32)
  const deviceCodeHash = await sha256Hex(deviceCode)
  const now = Date.now()
  // Old rows are only history; clearing them keeps the user-code space free.
  await env.DB.prepare('DELETE FROM device_authorizations WHERE expires_at < ?')
    .bind(iso(now - DAY_MS))
    .run()
  for (let attempt = 0; ; attempt++) {
    const userCode = generateUserCode()
    try {
      await env.DB.prepare(
        `INSERT INTO device_authorizations (id, device_code_hash, user_code, client, status, interval, expires_at, created_at)
         VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
      )
        .bind(
          crypto.randomUUID(),
          deviceCodeHash,
          normalizeUserCode(userCode),
          client,
          DEVICE_POLL_INTERVAL_SECONDS,
          iso(now + DEVICE_CODE_TTL_SECONDS * 1000),
          iso(now),
        )
        .run()
      const base = (env.APP_URL || origin).replace(/\/$/, '')
      return {
        deviceCode,
        userCode,
        verificationUri: `${base}/device`,
        verificationUriComplete: `${base}/device?user_code=${userCode}`,
        expiresIn: DEVICE_CODE_TTL_SECONDS,
        interval: DEVICE_POLL_INTERVAL_SECONDS,
      }
    } catch (err) {
      // A user-code collision (unique index) is astronomically rare; try a fresh code.
      if (attempt >= 2 || !String(err).includes('UNIQUE')) throw err
    }
  }
}

/** What the approving person is shown: which client asked, and whether the code is still open. */
export interface DeviceAuthorizationView {
  userCode: string
  client: string
  status: 'pending' | 'approved'
  expiresAt: string
}

/** A live user code's client and state, for the approval page; unknown or expired codes are 404. */
export async function describeDeviceAuthorization(env: Env, userCode: string): Promise<DeviceAuthorizationView> {
  const code = normalizeUserCode(userCode)
  const row = await env.DB.prepare('SELECT client, status, expires_at FROM device_authorizations WHERE user_code = ?')
    .bind(code)
    .first<{ client: string; status: string; expires_at: string }>()
  if (!row || Date.parse(row.expires_at) <= Date.now()) {
    throw new ApiError(
      'device_authorization_not_found',
      `No pending device authorization with code ${formatUserCode(code)}`,
    )
  }
  return {
    userCode: formatUserCode(code),
    client: row.client,
    status: row.status === 'pending' ? 'pending' : 'approved',
    expiresAt: row.expires_at,
  }
}

type PendingRow = Pick<D1Row<typeof deviceAuthorizations>, 'id' | 'status' | 'expires_at'>

/**
 * Approves a pending user code for a workspace the session's user belongs to (the session's own
 * workspace by default). Unknown or expired codes are 404; a code already approved is 400.
 */
export async function approveDeviceAuthorization(
  env: Env,
  session: { userId: string; workspaceId: string },
  userCode: string,
  workspaceId?: string,
): Promise<void> {
  const code = normalizeUserCode(userCode)
  const row = await env.DB.prepare('SELECT id, status, expires_at FROM device_authorizations WHERE user_code = ?')
    .bind(code)
    .first<PendingRow>()
  if (!row || Date.parse(row.expires_at) <= Date.now()) {
    throw new ApiError(
      'device_authorization_not_found',
      `No pending device authorization with code ${formatUserCode(code)}`,
    )
  }
  if (row.status !== 'pending') {
    throw new ApiError('invalid_input', 'This code was already used', { field: 'userCode' })
  }
  const target = workspaceId ?? session.workspaceId
  if (!(await isMember(env.DB, session.userId, target))) {
    throw new ApiError('workspace_not_found', `Workspace ${target} not found`)
  }
  const approved = await env.DB.prepare(
    `UPDATE device_authorizations SET status = 'approved', user_id = ?, workspace_id = ?, approved_at = ?
      WHERE id = ? AND status = 'pending' AND expires_at > ?`,
  )
    .bind(session.userId, target, iso(), row.id, iso())
    .run()
  if (!approved.meta.changes) throw new ApiError('invalid_input', 'This code was already used', { field: 'userCode' })
}

type PollRow = Pick<
  D1Row<typeof deviceAuthorizations>,
  'id' | 'client' | 'status' | 'interval' | 'last_polled_at' | 'user_id' | 'workspace_id' | 'expires_at'
>

const invalidDeviceCode = (detail: string) => new ApiError('invalid_input', detail, { field: 'deviceCode' })

/**
 * One poll of the token endpoint:
 * - unknown, expired or already exchanged → 400 `invalid_input` (`field: deviceCode`);
 * - sooner than `interval` after the previous poll → 429 with `Retry-After`, and the interval
 *   grows by 5 s (RFC 8628 `slow_down`);
 * - pending → 428 `authorization_pending` with `Retry-After` = the interval;
 * - approved → a new session's tokens, exactly once (the exchange is a compare-and-set).
 */
export async function pollDeviceAuthorization(env: Env, deviceCode: string): Promise<TokenPair> {
  const row = await env.DB.prepare(
    `SELECT id, client, status, interval, last_polled_at, user_id, workspace_id, expires_at
       FROM device_authorizations WHERE device_code_hash = ?`,
  )
    .bind(await sha256Hex(deviceCode))
    .first<PollRow>()
  if (!row) throw invalidDeviceCode('Unknown device code')
  const now = Date.now()
  if (row.status === 'exchanged') throw invalidDeviceCode('This device code was already exchanged for tokens')
  if (Date.parse(row.expires_at) <= now) throw invalidDeviceCode('The device code has expired; start again')

  // The poll is recorded with a compare-and-set on the previous poll time, so two polls racing
  // cannot both count as on time.
  const tooSoon = row.last_polled_at !== null && now - Date.parse(row.last_polled_at) < row.interval * 1000
  if (tooSoon) {
    const slowed = await env.DB.prepare(
      'UPDATE device_authorizations SET interval = interval + ?, last_polled_at = ? WHERE id = ? RETURNING interval',
    )
      .bind(SLOW_DOWN_STEP_SECONDS, iso(now), row.id)
      .first<{ interval: number }>()
    const interval = slowed?.interval ?? row.interval + SLOW_DOWN_STEP_SECONDS
    throw new ApiError('rate_limit_exceeded', `Polling too fast: wait ${interval} s between polls (slow_down)`, {
      retryAfter: interval,
    })
  }
  const polled = await env.DB.prepare(
    'UPDATE device_authorizations SET last_polled_at = ? WHERE id = ? AND last_polled_at IS ?',
  )
    .bind(iso(now), row.id, row.last_polled_at)
    .run()
  if (!polled.meta.changes) {
    throw new ApiError('rate_limit_exceeded', `Polling too fast: wait ${row.interval} s between polls (slow_down)`, {
      retryAfter: row.interval,
    })
  }

  if (row.status === 'pending') {
    throw new ApiError('authorization_pending', 'Waiting for the user to approve the code', {
      retryAfter: row.interval,
    })
  }
  const exchanged = await env.DB.prepare(
    "UPDATE device_authorizations SET status = 'exchanged', exchanged_at = ? WHERE id = ? AND status = 'approved'",
  )
    .bind(iso(now), row.id)
    .run()
  if (!exchanged.meta.changes || !row.user_id || !row.workspace_id) {
    throw invalidDeviceCode('This device code was already exchanged for tokens')
  }
  return startSession(env, { userId: row.user_id, workspaceId: row.workspace_id, method: 'device', client: row.client })
}
