/**
 * @module
 * Signed result URLs (DESIGN.md §3): `<result path>?exp=…&sig=…`, an HMAC over the path and the
 * expiry, readable without an API key for ten minutes. Job results (`/v1/jobs/{id}/result`) and
 * export results (`/v1/projects/{id}/exports/{exportId}/result`) are signed the same way.
 */
import { hmacHex, timingSafeEqualHex } from '../lib/crypto'

export const RESULT_URL_TTL_MS = 10 * 60 * 1000

export async function signResultPath(secret: string, path: string, now = Date.now()) {
  const exp = Math.floor((now + RESULT_URL_TTL_MS) / 1000)
  const sig = await hmacHex(secret, `result:${path}:${exp}`)
  return { path: `${path}?exp=${exp}&sig=${sig}`, expiresAt: new Date(exp * 1000).toISOString() }
}

export async function verifyResultSignature(secret: string, path: string, exp: string, sig: string): Promise<boolean> {
  const expSeconds = Number(exp)
  if (!Number.isInteger(expSeconds) || expSeconds * 1000 < Date.now()) return false
  return timingSafeEqualHex(await hmacHex(secret, `result:${path}:${expSeconds}`), sig)
}
