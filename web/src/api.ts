/**
 * The page's only way to the API: same-origin fetch with the session's bearer token when signed
 * in (the anonymous device cookie otherwise), problem+json turned into the SDK's `CutoutProblem`,
 * and one refresh-and-retry when an access token has expired. Tokens never go into URLs or the
 * console. The types and the problem class are the SDK's (sdk/src), bundled into the page.
 */
import { CutoutProblem } from '../../sdk/src/problem'
import type { components } from '../../sdk/src/schema'
import { clearSession, loadSession, type Session, saveSession } from './session'

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

async function refresh(session: Session): Promise<Session | null> {
  const res = await fetch('/v1/auth/refresh', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refreshToken: session.refreshToken }),
  })
  if (!res.ok) {
    clearSession()
    return null
  }
  const pair = (await res.json()) as { accessToken: string; refreshToken: string; expiresIn: number }
  const next = { ...session, ...pair, expiresAt: Date.now() + pair.expiresIn * 1000 }
  saveSession(next)
  return next
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
  let session = opts.anonymous ? null : loadSession()
  // Refresh a minute early so a long upload does not start with a token about to lapse.
  if (session && session.expiresAt - 60_000 < Date.now()) session = await refresh(session)
  const send = (s: Session | null) => {
    const headers: Record<string, string> = { ...opts.headers }
    if (s) headers.authorization = `Bearer ${s.accessToken}`
    let body = opts.body
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(opts.json)
    }
    return fetch(path, { method: opts.method ?? 'GET', headers, body, signal: opts.signal, credentials: 'same-origin' })
  }
  let res: Response
  try {
    res = await send(session)
    if (res.status === 401 && session) {
      session = await refresh(session)
      if (session) res = await send(session)
    }
    for (let retry = 0; retry < RATE_LIMIT_RETRIES && shortRetryAfter(res) !== null; retry++) {
      await waitOut(shortRetryAfter(res) ?? 0)
      res = await send(session)
    }
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err
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
