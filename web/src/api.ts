/**
 * The page's only way to the API: same-origin fetch with the session's bearer token when signed
 * in (the anonymous device cookie otherwise), problem+json turned into the SDK's `CutoutProblem`.
 * The session is the SDK's too (`Credentials` over web/src/session.ts's store): renewed a minute
 * before it lapses or once after a 401, one renewal at a time in this tab and across its copies in
 * other tabs. Tokens never go into URLs or the console. The types and the problem class are the
 * SDK's (sdk/src), bundled into the page.
 */
import { Credentials, type TokenPair } from '../../sdk/src/auth'
import { CutoutProblem } from '../../sdk/src/problem'
import type { components } from '../../sdk/src/schema'
import { clearSession, loadSession, sessionStore } from './session'

export { CutoutProblem }

/** The API's resources as the SDK types them (generated from /openapi.json: one source). */
export type Schemas = components['schemas']
export type Job = Schemas['Job']

export interface RequestOptions {
  method?: string
  body?: BodyInit | null
  json?: unknown
  headers?: Record<string, string>
  /** Send no credential even when signed in (anonymous previews ride on the device cookie). */
  anonymous?: boolean
  signal?: AbortSignal
}

const credentials = new Credentials({ session: sessionStore }, async (refreshToken): Promise<TokenPair> => {
  const res = await fetch('/v1/auth/refresh', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refreshToken }),
  })
  if (!res.ok) throw await CutoutProblem.fromResponse(res)
  return (await res.json()) as TokenPair
})

/**
 * The bearer token to send, renewed when it is about to lapse (or, given the token a 401 refused,
 * renewed now). A session the API will not renew has ended: the page forgets it, and the problem
 * ("sign in again") goes to the caller.
 */
async function bearer(refused?: string): Promise<string | undefined> {
  if (!loadSession()) return undefined
  try {
    return refused ? await credentials.renew(refused) : await credentials.token()
  } catch (err) {
    if (err instanceof CutoutProblem && err.status === 401) clearSession()
    throw err
  }
}

/** How often a request the rate limit refused is sent again after its `Retry-After`. */
const RATE_LIMIT_RETRIES = 2

/** Told when a request starts waiting out a 429 (the epoch ms it will be sent again) and when it stops. */
type RateWaitListener = (event: { id: number; until: number | null }) => void
const rateWaitListeners: RateWaitListener[] = []
let rateWaits = 0

/** Subscribes to the waits for a short `Retry-After`, so the page can say why nothing happens. */
export function onRateWait(listener: RateWaitListener): void {
  rateWaitListeners.push(listener)
}

async function waitOut(seconds: number): Promise<void> {
  const id = ++rateWaits
  const ms = seconds * 1000 + 250
  for (const l of rateWaitListeners) l({ id, until: Date.now() + ms })
  try {
    await new Promise((resolve) => setTimeout(resolve, ms))
  } finally {
    for (const l of rateWaitListeners) l({ id, until: null })
  }
}

/**
 * The wait a 429 asks for when it is short (the per-minute request rate), else null: the daily
 * anonymous allowance also answers 429, with a wait until midnight, and that one is shown.
 */
function shortRetryAfter(res: Response): number | null {
  if (res.status !== 429) return null
  const seconds = Number(res.headers.get('retry-after'))
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= 60 ? seconds : null
}

/**
 * A raw response for a 2xx; throws `CutoutProblem` otherwise. A 429 with a short `Retry-After` is
 * waited out and sent again (the body is a string, FormData or File, so it can be re-sent).
 */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const send = (token: string | undefined) => {
    const headers: Record<string, string> = { ...opts.headers }
    if (token) headers.authorization = `Bearer ${token}`
    let body = opts.body
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(opts.json)
    }
    return fetch(path, { method: opts.method ?? 'GET', headers, body, signal: opts.signal, credentials: 'same-origin' })
  }
  let res: Response
  try {
    let token = opts.anonymous ? undefined : await bearer()
    res = await send(token)
    if (res.status === 401 && token) {
      token = await bearer(token)
      res = await send(token)
    }
    for (let retry = 0; retry < RATE_LIMIT_RETRIES && shortRetryAfter(res) !== null; retry++) {
      await waitOut(shortRetryAfter(res) ?? 0)
      res = await send(token)
    }
  } catch (err) {
    if (err instanceof CutoutProblem || (err as Error).name === 'AbortError') throw err
    throw new CutoutProblem(0, {
      code: 'network_error',
      detail: 'Could not reach the server: check your connection and try again',
    })
  }
  if (!res.ok) throw await CutoutProblem.fromResponse(res)
  return res
}

export async function requestJson<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await request(path, opts)
  return res.status === 204 ? (undefined as T) : ((await res.json()) as T)
}

/** Shown for any thrown value: a problem's detail and field, or the error's own message. */
export function describeError(err: unknown): string {
  if (err instanceof CutoutProblem) return err.field ? `${err.detail} (field: ${err.field})` : err.detail
  return err instanceof Error ? err.message : String(err)
}
