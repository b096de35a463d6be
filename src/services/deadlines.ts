/**
 * @module
 * How long the edge waits on an inference server (issue 15 item 1). A server that accepts a
 * connection and then never answers (frozen, SIGSTOPped, wedged in native code) must not keep a
 * job `processing` with its credit hold: every call gets a deadline scaled to its work, and a
 * readiness check that does not answer within a bound counts as down. Production defaults are
 * generous (CPU inference, a queue of several jobs ahead on the server); tests shrink them
 * through the variables below.
 */

/** Defaults (docs/decisions.md "Queued, processing and retries"). */
export const DEADLINE_DEFAULTS = {
  /** `INFERENCE_READY_TIMEOUT_MS`: a readiness check slower than this counts as a server that is down. */
  readyTimeoutMs: 5_000,
  /**
   * `INFERENCE_DEADLINE_BASE_MS`: what every call may spend besides its own pixels: the upload of
   * its parts and the wait in the server's admission queue (8 jobs of ~1.5 s on a 2-core CPU).
   */
  baseMs: 60_000,
  /** `INFERENCE_DEADLINE_PER_MP_MS`: per megapixel of input at scale 1 (a balanced removal). */
  perMegapixelMs: 4_000,
  /**
   * `INFERENCE_DEADLINE_MAX_MS`: a cap. A Durable Object alarm may run at most 15 minutes of wall
   * time, and a call must end (and settle the job) well inside the alarm that made it.
   */
  maxMs: 600_000,
} as const

/**
 * A request still unfinished this long after it started is one whose Worker died (redeployed,
 * evicted, out of memory) between claiming something and settling it: the longest a request runs
 * is a catalog image's inference call, capped at `maxMs` (10 minutes). What it claimed is then
 * freed: its `Idempotency-Key` (services/idempotency.ts) and a catalog call's credit hold
 * (services/catalog.ts).
 */
export const ABANDONED_REQUEST_MS = 15 * 60_000

export type DeadlineConfig = { -readonly [K in keyof typeof DEADLINE_DEFAULTS]: number }

/**
 * What a call works on: the pixels it reads (all images together) and those it makes beyond them
 * (an export's canvas, which a recipe may make far larger than its photo), and how heavy the kind
 * and level are.
 */
export interface CallWork {
  pixels: number
  /** The kind's and level's factor: 1 for a balanced removal (see each `JobKind.workScale`). */
  scale: number
}

/**
 * The work of a call with these parts: the pixels its images declare and `made` (its kind's
 * `outputPixels`, default 0), at the kind's scale (default 1).
 */
export function callWork(parts: { pixels?: number }[], scale = 1, made = 0): CallWork {
  return { pixels: parts.reduce((sum, p) => sum + (p.pixels ?? 0), made), scale }
}

/**
 * The call's deadline in milliseconds: base + scale × per-MP × megapixels, capped. The model runs
 * at a fixed size (1024²) whatever the input, so an input under one megapixel counts as one.
 * @example callDeadlineMs(DEADLINE_DEFAULTS, { pixels: 12e6, scale: 2 }) // 60 s + 2 × 4 s × 12 = 156 s
 */
export function callDeadlineMs(config: DeadlineConfig, work: CallWork): number {
  const megapixels = Math.max(1, work.pixels / 1e6)
  return Math.round(Math.min(config.maxMs, config.baseMs + work.scale * config.perMegapixelMs * megapixels))
}

/**
 * `work`, or the signal's reason as soon as it aborts: the run never waits on an answer past its
 * deadline, even if reading the aborted answer's body were to hang. The abandoned read ends with
 * the aborted fetch; its late failure is dropped.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined)
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
