/**
 * @module
 * Retries (SPEC.md §7): 429 (the request was not processed) after `Retry-After`, the full wait; 500,
 * 502, 503 and 504 and network failures only for idempotent requests (safe methods, or a POST
 * carrying an `Idempotency-Key`, which the API replays instead of doing twice). Never an answer
 * whose problem body says `retryable: false` (e.g. a project's 21st refinement), and never one
 * whose `Retry-After` is longer than `maxRetryAfterMs` (an allowance that resets in hours): those
 * go back to the caller, as a `CutoutProblem` carrying `retryAfter`. Without `Retry-After` the wait
 * is exponential backoff with full jitter, so many clients do not retry in step.
 */
import { OPERATIONS, type RetryRule } from './operations.js'
import { CutoutProblem, retryAfterSeconds } from './problem.js'

export interface RetryOptions {
  /** Attempts after the first. Default 4; 0 turns retries off. */
  maxRetries?: number
  /** First backoff ceiling in ms (doubles per attempt). Default 500. */
  baseDelayMs?: number
  /** Longest backoff wait in ms (`Retry-After` is not capped by it). Default 30 000. */
  maxDelayMs?: number
  /**
   * The longest `Retry-After` worth waiting for, in ms. Default 60 000: a per-minute rate window.
   * A longer one (the daily anonymous allowance) is not waited for but returned to the caller.
   */
  maxRetryAfterMs?: number
  /** Told before each wait (for logs and progress lines). */
  onRetry?: (info: { attempt: number; delayMs: number; status?: number; error?: unknown }) => void
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])
const RETRYABLE_5XX = new Set([500, 502, 503, 504])

/** `/v1/jobs/{id}` → a pattern matching `/v1/jobs/<one segment>`, whole. */
const templatePattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`)

/** The document's operations as patterns, literal paths first (`/v1/jobs/events` before `/v1/jobs/{id}`). */
const RULES = OPERATIONS.map((o) => ({
  ...o,
  pattern: templatePattern(o.path),
  params: o.path.split('{').length,
})).sort((a, b) => a.params - b.params)

/**
 * How /openapi.json says `method path` may be repeated (`x-cutout-retry`, generated into
 * operations.ts): a path the document does not know is `safe` for safe methods, else `once`.
 * @example retryRuleFor('POST', '/v1/removals') // 'idempotency-key'
 */
export function retryRuleFor(method: string, path: string): RetryRule {
  const hit = RULES.find((r) => r.method === method && r.pattern.test(path))
  return hit?.retry ?? (IDEMPOTENT_METHODS.has(method) ? 'safe' : 'once')
}

export function isIdempotent(request: Request): boolean {
  return IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key')
}

/** Full jitter: a uniform wait between 0 and the exponential ceiling. */
export function backoffMs(attempt: number, base: number, max: number, random = Math.random): number {
  return Math.floor(random() * Math.min(max, base * 2 ** attempt))
}

export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(done, ms)
    function done() {
      signal?.removeEventListener('abort', abort)
      resolve()
    }
    function abort() {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', abort, { once: true })
  })
}

/** The `retryable` of a problem+json answer, read from a copy (the caller may still read it). */
async function saysRetryable(res: Response): Promise<boolean | undefined> {
  if (!/json/i.test(res.headers.get('content-type') ?? '')) return undefined
  try {
    const body = (await res.clone().json()) as { retryable?: unknown }
    return typeof body?.retryable === 'boolean' ? body.retryable : undefined
  } catch {
    return undefined
  }
}

/** The wait before the next attempt, or undefined when this outcome is final. */
async function nextDelay(
  request: Request,
  idempotent: boolean,
  outcome: Response | unknown,
  attempt: number,
  o: Required<RetryOptions>,
): Promise<number | undefined> {
  if (outcome instanceof Response) {
    const retryable = outcome.status === 429 || (RETRYABLE_5XX.has(outcome.status) && idempotent)
    if (!retryable || (await saysRetryable(outcome)) === false) return undefined
    const after = retryAfterSeconds(outcome.headers)
    if (after !== undefined) return after * 1000 > o.maxRetryAfterMs ? undefined : after * 1000
  } else if (!idempotent || request.signal.aborted || outcome instanceof CutoutProblem) {
    // A problem thrown before or after the send (a session that could not be renewed) is the API's
    // answer, not a lost connection: sending again cannot change it.
    return undefined
  }
  return backoffMs(attempt, o.baseDelayMs, o.maxDelayMs)
}

/**
 * Wraps `send` (one attempt for a fresh copy of the request) with the retry rules above.
 * `idempotent`: whether repeating the request is safe, when the caller knows more than its method
 * and headers say (a JSON-RPC call that only reads, or carries its own idempotency key).
 */
export async function withRetries(
  request: Request,
  send: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
  idempotent = isIdempotent(request),
): Promise<Response> {
  const o: Required<RetryOptions> = {
    maxRetries: 4,
    baseDelayMs: 500,
    maxDelayMs: 30_000,
    maxRetryAfterMs: 60_000,
    onRetry: () => {},
    ...options,
  }
  for (let attempt = 0; ; attempt++) {
    let outcome: Response | unknown
    try {
      outcome = await send(request.clone())
    } catch (err) {
      outcome = err
    }
    const delay = attempt < o.maxRetries ? await nextDelay(request, idempotent, outcome, attempt, o) : undefined
    if (delay === undefined) {
      if (outcome instanceof Response) return outcome
      throw outcome
    }
    if (outcome instanceof Response) await outcome.body?.cancel().catch(() => undefined)
    o.onRetry({
      attempt: attempt + 1,
      delayMs: delay,
      ...(outcome instanceof Response ? { status: outcome.status } : { error: outcome }),
    })
    await sleep(delay, request.signal)
  }
}
