/**
 * Edge → inference request signing (docs/inference-protocol.md): an HS256 JWT that binds the
 * method, the path, and each part of the body (name, type, length, SHA-256), lives at most 60 s
 * and is accepted once. The claims and the signer are the shared contract's
 * (`src/contract/signing.ts`), so the edge and this server cannot drift apart.
 */
import { createHash } from 'node:crypto'
import { errors as joseErrors, jwtVerify } from 'jose'
import {
  AUDIENCE,
  CLOCK_TOLERANCE_SECONDS,
  ISSUER,
  MAX_LIFETIME_SECONDS,
  type PartManifest,
  signInferenceToken,
} from '../../src/contract/signing.js'
import { InferenceError } from './errors.js'

export { AUDIENCE, ISSUER, MAX_LIFETIME_SECONDS }

/** base64url (no padding) SHA-256. */
export const partHash = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('base64url')

export interface RequestPart {
  name: string
  type: string
  body: Uint8Array
}

/**
 * Signs a request made of `parts` and returns its headers and body (tests and benchmarks; the
 * edge streams stored parts instead).
 * @example const { headers, body } = await signedRequest(key, 'POST', '/v1/remove', [optionsPart, imagePart])
 */
export async function signedRequest(
  key: string,
  method: string,
  path: string,
  parts: RequestPart[],
  opts?: Parameters<typeof signInferenceToken>[2],
): Promise<{ headers: Record<string, string>; body: Uint8Array }> {
  const manifest = parts.map(({ name, type, body }) => ({
    name,
    type,
    length: body.byteLength,
    sha256: partHash(body),
  }))
  const token = await signInferenceToken(key, { method, path, parts: manifest }, opts)
  const body = Buffer.concat(parts.map((p) => p.body))
  return {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
  }
}

/** The options part of a job request. */
export const optionsPart = (value: unknown): RequestPart => ({
  name: 'options',
  type: 'application/json',
  body: new TextEncoder().encode(JSON.stringify(value)),
})

/** An image part. */
export const imagePart = (body: Uint8Array, name = 'image'): RequestPart => ({
  name,
  type: 'application/octet-stream',
  body,
})

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
  prt: PartManifest[]
  jti: string
}

export interface Verifier {
  /** Checks the token and everything but the body; spends the `jti`. */
  verifyHeader(authorization: string | undefined, method: string, path: string): Promise<VerifiedClaims>
  /** Splits the body into the token's parts, checking each one's length and hash. */
  verifyBody(claims: VerifiedClaims, body: Uint8Array): Map<string, Uint8Array>
}

/**
 * Builds the verifier for one signing key. It is split in two so a bad token is refused
 * before the (up to 50 MB) body is read.
 */
export function createVerifier(
  key: string,
  { replay = new ReplayCache(), clock = () => Date.now() / 1000 } = {},
): Verifier {
  const secret = new TextEncoder().encode(key)
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
          requiredClaims: ['iat', 'exp', 'jti', 'mth', 'pth', 'prt'],
        }))
      } catch (err) {
        const reason = err instanceof joseErrors.JOSEError ? err.code : 'malformed token'
        throw unauthorized(reason, err)
      }
      const { iat, exp, jti, mth, pth, prt } = payload as Record<string, unknown>
      if (typeof iat !== 'number' || typeof exp !== 'number') throw unauthorized('iat and exp must be numbers')
      if (iat > now + CLOCK_TOLERANCE_SECONDS) throw unauthorized('token issued in the future')
      if (exp - iat > MAX_LIFETIME_SECONDS) throw unauthorized(`lifetime over ${MAX_LIFETIME_SECONDS} s`)
      if (exp <= iat) throw unauthorized('exp is not after iat')
      if (typeof jti !== 'string') throw unauthorized('jti must be a string')
      if (!isManifest(prt)) throw unauthorized('prt must list parts as {name, type, length, sha256}')
      if (mth !== method.toUpperCase()) throw unauthorized('method mismatch')
      if (pth !== path) throw unauthorized('path mismatch')
      // Spent here, before the body is read: a token is good for one attempt, whatever its outcome.
      if (!replay.claim(jti, exp, now)) throw unauthorized('token already used')
      return { prt, jti }
    },
    verifyBody(claims, body) {
      const total = claims.prt.reduce((sum, p) => sum + p.length, 0)
      if (total !== body.byteLength) throw unauthorized(`body length ${body.byteLength} is not the parts' ${total}`)
      const parts = new Map<string, Uint8Array>()
      let offset = 0
      for (const part of claims.prt) {
        const bytes = body.subarray(offset, offset + part.length)
        offset += part.length
        if (partHash(bytes) !== part.sha256) throw unauthorized(`hash mismatch in part ${part.name}`)
        parts.set(part.name, bytes)
      }
      return parts
    },
  }
}

function isManifest(value: unknown): value is PartManifest[] {
  return (
    Array.isArray(value) &&
    value.every(
      (p) =>
        typeof p?.name === 'string' &&
        typeof p.type === 'string' &&
        Number.isInteger(p.length) &&
        p.length >= 0 &&
        typeof p.sha256 === 'string',
    ) &&
    new Set(value.map((p) => p.name)).size === value.length
  )
}
