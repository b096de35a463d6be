/**
 * Edge → inference request signing (docs/inference-protocol.md): an HS256 JWT that binds the
 * method, the path with its query, and the SHA-256 of the body, lives at most 60 s and is
 * accepted once. `signRequest` is the reference signer (tests use it; the Worker has its own).
 */
import { createHash, randomUUID } from 'node:crypto'
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose'
import { InferenceError } from './errors.js'

export const ISSUER = 'cutout-edge'
export const AUDIENCE = 'cutout-inference'
export const MAX_LIFETIME_SECONDS = 60
export const CLOCK_TOLERANCE_SECONDS = 30

export interface SignedRequest {
  method: string
  /** Path plus query string, exactly as sent: `/v1/remove?quality=fast&...`. */
  path: string
  body?: Uint8Array
}

/** base64url (no padding) SHA-256 of the body; an empty body hashes "". */
export const bodyHash = (body: Uint8Array = new Uint8Array(0)): string =>
  createHash('sha256').update(body).digest('base64url')

const keyBytes = (key: string): Uint8Array => new TextEncoder().encode(key)

/**
 * Makes the `Authorization` header value for one request.
 * @example headers.authorization = await signRequest(key, { method: 'POST', path: '/v1/inspect', body })
 */
export async function signRequest(
  key: string,
  { method, path, body }: SignedRequest,
  {
    now = Math.floor(Date.now() / 1000),
    lifetime = 30,
    jti = randomUUID(),
  }: { now?: number; lifetime?: number; jti?: string } = {},
): Promise<string> {
  const token = await new SignJWT({ mth: method.toUpperCase(), pth: path, bsh: bodyHash(body) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + lifetime)
    .setJti(jti)
    .sign(keyBytes(key))
  return `Bearer ${token}`
}

/**
 * Remembers each accepted `jti` until its token expires (plus the clock tolerance), so a
 * replayed token is refused while it could still verify. Entries are swept as time passes.
 */
export class ReplayCache {
  #seen = new Map<string, number>()
  #nextSweep = 0

  /** Records `jti`; false when it was already used. */
  claim(jti: string, exp: number, now: number): boolean {
    if (now >= this.#nextSweep) this.#sweep(now)
    const until = this.#seen.get(jti)
    if (until !== undefined && until >= now) return false
    this.#seen.set(jti, exp + CLOCK_TOLERANCE_SECONDS)
    return true
  }

  get size(): number {
    return this.#seen.size
  }

  #sweep(now: number): void {
    for (const [jti, until] of this.#seen) if (until < now) this.#seen.delete(jti)
    this.#nextSweep = now + 10
  }
}

const unauthorized = (reason: string, cause?: unknown): InferenceError =>
  new InferenceError('invalid_signature', `Invalid request signature: ${reason}`, { cause })

interface VerifiedClaims {
  bsh: string
  jti: string
}

export interface Verifier {
  /** Checks the token and everything but the body; spends the `jti`. */
  verifyHeader(authorization: string | undefined, method: string, path: string): Promise<VerifiedClaims>
  /** Checks the body against the token's hash. */
  verifyBody(claims: VerifiedClaims, body: Uint8Array): void
}

/**
 * Builds the verifier for one signing key. It is split in two so a bad token is refused
 * before the (up to 50 MB) body is read.
 */
export function createVerifier(
  key: string,
  { replay = new ReplayCache(), clock = () => Date.now() / 1000 } = {},
): Verifier {
  const secret = keyBytes(key)
  return {
    async verifyHeader(authorization, method, path) {
      const match = /^Bearer ([\w-]+\.[\w-]+\.[\w-]+)$/.exec(authorization ?? '')
      if (!match) throw unauthorized('missing bearer token')
      const now = clock()
      let payload: Record<string, unknown>
      try {
        ;({ payload } = await jwtVerify(match[1], secret, {
          algorithms: ['HS256'],
          issuer: ISSUER,
          audience: AUDIENCE,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: new Date(now * 1000),
          requiredClaims: ['iat', 'exp', 'jti', 'mth', 'pth', 'bsh'],
        }))
      } catch (err) {
        const reason = err instanceof joseErrors.JOSEError ? err.code : 'malformed token'
        throw unauthorized(reason, err)
      }
      const { iat, exp, jti, mth, pth, bsh } = payload as Record<string, unknown>
      if (typeof iat !== 'number' || typeof exp !== 'number') throw unauthorized('iat and exp must be numbers')
      if (iat > now + CLOCK_TOLERANCE_SECONDS) throw unauthorized('token issued in the future')
      if (exp - iat > MAX_LIFETIME_SECONDS) throw unauthorized(`lifetime over ${MAX_LIFETIME_SECONDS} s`)
      if (exp <= iat) throw unauthorized('exp is not after iat')
      if (typeof jti !== 'string' || typeof bsh !== 'string') throw unauthorized('jti and bsh must be strings')
      if (mth !== method.toUpperCase()) throw unauthorized('method mismatch')
      if (pth !== path) throw unauthorized('path mismatch')
      // Spent here, before the body is read: a token is good for one attempt, whatever its outcome.
      if (!replay.claim(jti, exp, now)) throw unauthorized('token already used')
      return { bsh, jti }
    },
    verifyBody(claims, body) {
      if (bodyHash(body) !== claims.bsh) throw unauthorized('body hash mismatch')
    },
  }
}
