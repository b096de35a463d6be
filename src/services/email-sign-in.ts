/**
 * @module
 * Email sign-in (SPEC.md §4, DESIGN.md §3): a six-digit code, valid ten minutes, single use,
 * stored only as an HMAC; five failed attempts end it.
 *
 * `start` never reads `users`: it does the same work for every address (write a challenge, send a
 * code), so neither its answer nor its timing says whether the email has an account. `verify`
 * creates the user and the default workspace on first sign-in.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { hmacHex, timingSafeEqualHex } from '../lib/crypto'
import { iso } from '../lib/time'
import { emailSenderFor, type EmailSender } from './email'
import { startSession, type TokenPair } from './sessions'
import { findOrCreateUser, type UserRef, type WorkspaceRef } from './users'

export const CODE_DIGITS = 6
export const CODE_TTL_MS = 10 * 60_000
export const MAX_CODE_ATTEMPTS = 5
/** At most this many codes per email per window; more get 429 (limits guesses per address). */
export const MAX_CODES_PER_WINDOW = 5
export const CODE_WINDOW_MS = 15 * 60_000

/** Trim and lower-case, so `A@Example.com ` and `a@example.com` are one account. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** A uniformly random six-digit code (rejection sampling: no modulo bias). */
export function generateCode(): string {
  const range = 10 ** CODE_DIGITS
  const limit = Math.floor(0x1_0000_0000 / range) * range
  const buf = new Uint32Array(1)
  for (;;) {
    crypto.getRandomValues(buf)
    if (buf[0] < limit) return String(buf[0] % range).padStart(CODE_DIGITS, '0')
  }
}

/** HMAC of the code bound to its email: a leaked table cannot be brute-forced without the key. */
export const hashCode = (env: Pick<Env, 'SESSION_SIGNING_KEY'>, email: string, code: string) => {
  if (!env.SESSION_SIGNING_KEY) {
    throw new ApiError('processing_failed', 'Sign-in is not configured: SESSION_SIGNING_KEY is missing')
  }
  return hmacHex(env.SESSION_SIGNING_KEY, `email-code:v1:${email}:${code}`)
}

function signInEmail(code: string) {
  return {
    subject: `Your sign-in code: ${code}`,
    text: [
      `Your sign-in code is ${code}`,
      '',
      'It is valid for 10 minutes and can be used once.',
      'If you did not ask to sign in, ignore this email: nobody can sign in without the code.',
    ].join('\n'),
  }
}

/**
 * Replaces any previous challenge of the email with a new code and sends it. A new start resets
 * the attempt counter, so starts are limited per email (`MAX_CODES_PER_WINDOW`); the limit
 * applies to every address alike and reveals nothing.
 */
export async function startEmailSignIn(
  env: Env,
  rawEmail: string,
  sender: EmailSender = emailSenderFor(env),
): Promise<void> {
  const email = normalizeEmail(rawEmail)
  const code = generateCode()
  const now = Date.now()
  const windowFloor = iso(now - CODE_WINDOW_MS)
  const written = await env.DB.prepare(
    `INSERT INTO email_challenges (email, code_hash, attempts, expires_at, sent_count, window_started_at, created_at)
     VALUES (?1, ?2, 0, ?3, 1, ?4, ?4)
     ON CONFLICT (email) DO UPDATE SET
       code_hash = excluded.code_hash,
       attempts = 0,
       expires_at = excluded.expires_at,
       created_at = excluded.created_at,
       sent_count = CASE WHEN window_started_at <= ?5 THEN 1 ELSE sent_count + 1 END,
       window_started_at = CASE WHEN window_started_at <= ?5 THEN excluded.window_started_at ELSE window_started_at END
     WHERE window_started_at <= ?5 OR sent_count < ?6`,
  )
    .bind(email, await hashCode(env, email, code), iso(now + CODE_TTL_MS), iso(now), windowFloor, MAX_CODES_PER_WINDOW)
    .run()
  if (!written.meta.changes) {
    const row = await env.DB.prepare('SELECT window_started_at FROM email_challenges WHERE email = ?')
      .bind(email)
      .first<{ window_started_at: string }>()
    const retryAfter = row
      ? Math.max(1, Math.ceil((Date.parse(row.window_started_at) + CODE_WINDOW_MS - now) / 1000))
      : 60
    throw new ApiError('rate_limit_exceeded', `Too many sign-in codes for this email; try again in ${retryAfter} s`, {
      retryAfter,
    })
  }
  await sender.send({ to: email, ...signInEmail(code) })
}

export interface SignedIn extends TokenPair {
  user: UserRef
  workspace: WorkspaceRef
}

const noChallenge = () =>
  new ApiError(
    'invalid_input',
    'No valid sign-in code for this email: it expired, was used, or too many attempts failed; request a new one',
    { field: 'code' },
  )

/**
 * Checks a code and opens a session. Each call first takes one attempt atomically
 * (`attempts < 5`), so parallel guesses cannot exceed five; the right code is then consumed with a
 * compare-and-set on its hash, so it works once.
 */
export async function verifyEmailSignIn(env: Env, rawEmail: string, code: string): Promise<SignedIn> {
  const email = normalizeEmail(rawEmail)
  const now = iso()
  const taken = await env.DB.prepare(
    `UPDATE email_challenges SET attempts = attempts + 1
      WHERE email = ? AND attempts < ? AND expires_at > ?
      RETURNING code_hash, attempts`,
  )
    .bind(email, MAX_CODE_ATTEMPTS, now)
    .first<{ code_hash: string; attempts: number }>()
  if (!taken) throw noChallenge()
  const expected = await hashCode(env, email, code)
  if (!timingSafeEqualHex(taken.code_hash, expected)) {
    const left = MAX_CODE_ATTEMPTS - taken.attempts
    throw new ApiError(
      'invalid_input',
      left > 0
        ? `The code is not correct; ${left} attempt${left === 1 ? '' : 's'} left`
        : 'The code is not correct; too many attempts failed, request a new code',
      { field: 'code' },
    )
  }
  const consumed = await env.DB.prepare(
    "UPDATE email_challenges SET code_hash = 'used', expires_at = ? WHERE email = ? AND code_hash = ?",
  )
    .bind(now, email, expected)
    .run()
  if (!consumed.meta.changes) throw noChallenge()

  const { user, workspace } = await findOrCreateUser(env.DB, email)
  const tokens = await startSession(env, { userId: user.id, workspaceId: workspace.id, method: 'email' })
  return { ...tokens, user, workspace }
}
