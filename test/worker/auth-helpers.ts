/**
 * Sign-in helpers for worker tests: read codes from the dev outbox, sign in by email.
 */
import { api } from './helpers'

export interface SignedIn {
  accessToken: string
  refreshToken: string
  tokenType: 'Bearer'
  expiresIn: number
  user: { id: string; email: string }
  workspace: { id: string; name: string }
}

/** A unique address per call, so tests never share a challenge. */
export const newEmail = (tag = 'user') => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`

/** The code of the newest sign-in email to `email` in the dev outbox. */
export async function latestCode(email: string): Promise<string> {
  const res = await api(`/v1/dev/outbox?to=${encodeURIComponent(email)}`)
  if (res.status !== 200) throw new Error(`outbox: ${res.status} ${await res.text()}`)
  const { messages } = (await res.json()) as { messages: { subject: string; text: string }[] }
  const code = messages[0]?.text.match(/\b(\d{6})\b/)?.[1]
  if (!code) throw new Error(`no sign-in code for ${email}`)
  return code
}

export async function startSignIn(email: string): Promise<Response> {
  return api('/v1/auth/email/start', { method: 'POST', json: { email } })
}

export async function verifySignIn(email: string, code: string): Promise<Response> {
  return api('/v1/auth/email/verify', { method: 'POST', json: { email, code } })
}

/** Signs in by email end to end and returns the session. */
export async function signIn(email = newEmail()): Promise<SignedIn> {
  const started = await startSignIn(email)
  if (started.status !== 202) throw new Error(`start: ${started.status} ${await started.text()}`)
  const res = await verifySignIn(email, await latestCode(email))
  if (res.status !== 200) throw new Error(`verify: ${res.status} ${await res.text()}`)
  return (await res.json()) as SignedIn
}

/** A code that is not `code` (for wrong-code attempts). */
export const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')
