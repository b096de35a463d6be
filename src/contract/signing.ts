/**
 * @module
 * Edge → inference request signing (DESIGN.md §1, docs/inference-protocol.md). An HS256 JWT made
 * with the shared `INFERENCE_SIGNING_KEY` binds the method, the path, and every part of the body
 * (name, type, length, SHA-256): the body is the parts' bytes back to back, so each byte is
 * covered, and the edge can sign several stored images without reading them first (R2 keeps
 * each one's hash). The server refuses a token used twice.
 */
import { SignJWT } from 'jose'

export const ISSUER = 'cutout-edge'
export const AUDIENCE = 'cutout-inference'
/** Longest lifetime (`exp - iat`) the server accepts. */
export const MAX_LIFETIME_SECONDS = 60
/** Lifetime of the tokens the edge makes. */
export const TOKEN_LIFETIME_SECONDS = 30
export const CLOCK_TOLERANCE_SECONDS = 30

/** One part of a request body, as the token lists it. */
export interface PartManifest {
  name: string
  /** Media type: `application/json` for options, the image's type (or octet-stream) for images. */
  type: string
  length: number
  /** base64url (no padding) SHA-256 of the part's bytes. */
  sha256: string
}

/** The claims beyond iss/aud/iat/exp/jti. */
export interface InferenceClaims {
  mth: string
  pth: string
  prt: PartManifest[]
}

export interface SignedRequest {
  method: string
  path: string
  parts: PartManifest[]
}

/**
 * Makes the bearer token of one request.
 * @example headers.authorization = `Bearer ${await signInferenceToken(key, { method: 'POST', path: '/v1/remove', parts })}`
 */
export async function signInferenceToken(
  key: string,
  { method, path, parts }: SignedRequest,
  {
    now = Math.floor(Date.now() / 1000),
    lifetime = TOKEN_LIFETIME_SECONDS,
    jti = crypto.randomUUID(),
  }: { now?: number; lifetime?: number; jti?: string } = {},
): Promise<string> {
  const claims: InferenceClaims = { mth: method.toUpperCase(), pth: path, prt: parts }
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + lifetime)
    .setJti(jti)
    .sign(new TextEncoder().encode(key))
}

/** base64url (no padding) SHA-256, as R2 and the manifest spell it. */
export async function sha256Base64url(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  let binary = ''
  for (const b of digest) binary += String.fromCharCode(b)
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

/** A part whose bytes are at hand (options, small inputs). */
export async function bytesPart(
  name: string,
  type: string,
  bytes: Uint8Array,
): Promise<PartManifest & { body: Uint8Array }> {
  return { name, type, length: bytes.byteLength, sha256: await sha256Base64url(bytes), body: bytes }
}

/** The `options` part: the JSON of `value`. */
export function jsonPart(name: string, value: unknown): Promise<PartManifest & { body: Uint8Array }> {
  return bytesPart(name, 'application/json', new TextEncoder().encode(JSON.stringify(value)))
}
