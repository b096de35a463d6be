/**
 * The page's way to the API: the SDK's `Cutout` client (sdk/src/client.ts) on this origin, so the
 * page keeps the rules every SDK user gets instead of copies of them. Its session is the SDK's
 * `storageSession` (web/src/session.ts), renewed a minute before it lapses or once after a 401,
 * one renewal in flight for all of the tab's requests and its copies in other tabs, and forgotten
 * when the API will not renew it (sdk/src/auth.ts). Its retries are the ones /openapi.json states
 * (sdk/src/retry.ts): a 429 waited out after a short `Retry-After`, a 5xx or a lost connection
 * sent again when the request is safe to repeat, an `Idempotency-Key` on every create. Answers
 * other than 2xx are the SDK's `CutoutProblem`, with the API's own code.
 *
 * What stays here is the page's own: which client sends (signed in, or anonymous on the device
 * cookie), how many times a person waits for a retry, the rate-wait notice's feed, and the words
 * for a connection that is lost. Tokens never go into URLs or the console.
 */
import { Cutout } from '../../sdk/src/client'
import { CutoutProblem } from '../../sdk/src/problem'
import type { RetryOptions } from '../../sdk/src/retry'
import type { components } from '../../sdk/src/schema'
import { loadSession, sessionStore } from './session'

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

/** The request never reached the API (offline, DNS, a dropped connection): there is no problem body. */
export class ConnectionLost extends Error {
  override readonly name = 'ConnectionLost'
  constructor(cause: unknown) {
    super('Could not reach the server: check your connection and try again', { cause })
  }
}

/** Told when a request starts waiting out a 429 (the epoch ms it will be sent again) and when it stops. */
type RateWaitListener = (event: { id: number; until: number | null }) => void
const rateWaitListeners: RateWaitListener[] = []
let rateWaits = 0

/** Subscribes to the waits for a short `Retry-After`, so the page can say why nothing happens. */
export function onRateWait(listener: RateWaitListener): void {
  rateWaitListeners.push(listener)
}

function announceRateWait(ms: number): void {
  const id = ++rateWaits
  for (const l of rateWaitListeners) l({ id, until: Date.now() + ms })
  setTimeout(() => {
    for (const l of rateWaitListeners) l({ id, until: null })
  }, ms)
}

/**
 * The SDK's retry rules, with fewer attempts than a script's default (a person is waiting on the
 * button); each wait for a 429 is announced.
 */
const RETRY: RetryOptions = {
  maxRetries: 2,
  onRetry: ({ status, delayMs }) => {
    if (status === 429) announceRateWait(delayMs)
  },
}

/** The browser's fetch (same-origin: the device cookie goes along), a lost connection said as such. */
async function send(request: Request): Promise<Response> {
  try {
    return await fetch(request)
  } catch (err) {
    throw request.signal.aborted ? err : new ConnectionLost(err)
  }
}

const origin = globalThis.location?.origin ?? 'http://localhost'
const signedInClient = new Cutout({ baseUrl: origin, session: sessionStore, retry: RETRY, fetch: send })
const anonymousClient = new Cutout({ baseUrl: origin, retry: RETRY, fetch: send })

/** The client for this call: the session's while signed in, else the anonymous one (the device cookie). */
export function cutout(anonymous = false): Cutout {
  return !anonymous && loadSession() ? signedInClient : anonymousClient
}

/** A raw response for a 2xx, through the SDK's transport; throws `CutoutProblem` otherwise. */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const headers = new Headers(opts.headers)
  let body = opts.body
  if (opts.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(opts.json)
  }
  const req = new Request(new URL(path, `${origin}/`), {
    method: opts.method ?? 'GET',
    headers,
    body,
    signal: opts.signal,
  })
  const res = await cutout(opts.anonymous).send(req)
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
