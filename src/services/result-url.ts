/**
 * @module
 * Signed result URLs (DESIGN.md §3): `/v1/jobs/{id}/result?exp=…&sig=…`, an HMAC over the job id
 * and expiry, readable without an API key for ten minutes.
 */
import { hmacHex, timingSafeEqualHex } from '../lib/crypto'

export const RESULT_URL_TTL_MS = 10 * 60 * 1000

export async function signResultPath(secret: string, jobId: string, now = Date.now()) {
  const exp = Math.floor((now + RESULT_URL_TTL_MS) / 1000)
  const sig = await hmacHex(secret, `result:${jobId}:${exp}`)
  return { path: `/v1/jobs/${jobId}/result?exp=${exp}&sig=${sig}`, expiresAt: new Date(exp * 1000).toISOString() }
}

export async function verifyResultSignature(secret: string, jobId: string, exp: string, sig: string): Promise<boolean> {
  const expSeconds = Number(exp)
  if (!Number.isInteger(expSeconds) || expSeconds * 1000 < Date.now()) return false
  return timingSafeEqualHex(await hmacHex(secret, `result:${jobId}:${expSeconds}`), sig)
}
