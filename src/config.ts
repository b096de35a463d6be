/**
 * @module
 * The deployment's tunables, parsed from the environment once and validated one way: a variable
 * that is unset, empty or not a positive number (a positive integer for counts) means its default.
 * `loadConfig` is called where services are made (services.ts, each Durable Object's constructor);
 * nothing else reads these variables, and they are declared here (`ConfigEnv`), not in the Worker's
 * `Env` (src/env.ts). Defaults are the production values; tests shrink some through the same
 * variables (vitest.worker.config.mts; test/env.d.ts types them for the tests), docs/decisions.md
 * says which.
 */
import { SOURCE_FETCH_TIMEOUT_MS } from './contract/limits'
import { DEADLINE_DEFAULTS, type DeadlineConfig } from './services/deadlines'

export const CONFIG_DEFAULTS = {
  /** `INFERENCE_MAX_ATTEMPTS`: attempts a job may spend on lost inference servers. */
  maxAttempts: 6,
  /** `INFERENCE_RETRY_BASE_MS`: the first retry's backoff; each attempt doubles it. */
  retryBaseMs: 1_000,
  /** How long a job may wait for a saturated inference fleet before it fails. */
  maxQueueWaitMs: 15 * 60_000,
  /**
   * `INFERENCE_RETRY_AFTER_MAX_MS`: the longest a server's `Retry-After` may hold one retry back
   * (servers ask 1 s when busy; the Worker tests set 50 ms so a busy server costs them no seconds).
   */
  retryAfterMaxMs: 60_000,
  /** `SSE_KEEPALIVE_MS`: between keepalive comments on an idle event stream (under proxies' idle cuts). */
  sseKeepaliveMs: 25_000,
  /** `SOURCE_FETCH_TIMEOUT_MS`: how long a `sourceUrl` fetch may take. */
  sourceFetchTimeoutMs: SOURCE_FETCH_TIMEOUT_MS,
  /** `ANONYMOUS_DAILY_REMOVALS`: removals per UTC day per device and per address (SPEC.md §5.4). */
  anonymousDailyRemovals: 7,
  /** `WORKSPACE_SLOT_LIMIT`: a workspace's jobs running at once. */
  workspaceSlotLimit: 4,
  /** `RATE_LIMIT_PER_MINUTE`: requests per window per workspace. */
  workspaceRequestsPerWindow: 120,
  /** `RATE_LIMIT_ANONYMOUS_PER_MINUTE`: requests per window per device and address without a key. */
  anonymousRequestsPerWindow: 30,
  /** `RATE_LIMIT_WINDOW_SECONDS`: the rate window; a minute, as the limits are "per minute". */
  rateWindowSeconds: 60,
} as const

/** The job runner's retry policy's settings (durable/retry-policy.ts). */
export interface RetryConfig {
  /** Attempts a job may spend on lost servers before it fails `processor_unavailable`. */
  maxAttempts: number
  /** First backoff; each attempt doubles it (full jitter over its upper half). */
  baseMs: number
  /** How long a job may wait for a busy fleet, from when it was queued, before it fails. */
  maxQueueWaitMs: number
  /** The longest one server's Retry-After may hold a retry back (a runaway value would outlast `maxQueueWaitMs`). */
  retryAfterMaxMs: number
}

export interface Config {
  deadlines: DeadlineConfig
  retry: RetryConfig
  sseKeepaliveMs: number
  sourceFetchTimeoutMs: number
  anonymousDailyRemovals: number
  workspaceSlotLimit: number
  workspaceRequestsPerWindow: number
  anonymousRequestsPerWindow: number
  rateWindowSeconds: number
}

/** The variables read here: every one is optional (a default stands in). */
export interface ConfigEnv {
  INFERENCE_MAX_ATTEMPTS?: string
  INFERENCE_RETRY_BASE_MS?: string
  INFERENCE_RETRY_AFTER_MAX_MS?: string
  INFERENCE_READY_TIMEOUT_MS?: string
  INFERENCE_DEADLINE_BASE_MS?: string
  INFERENCE_DEADLINE_PER_MP_MS?: string
  INFERENCE_DEADLINE_MAX_MS?: string
  SSE_KEEPALIVE_MS?: string
  SOURCE_FETCH_TIMEOUT_MS?: string
  ANONYMOUS_DAILY_REMOVALS?: string
  WORKSPACE_SLOT_LIMIT?: string
  RATE_LIMIT_PER_MINUTE?: string
  RATE_LIMIT_ANONYMOUS_PER_MINUTE?: string
  RATE_LIMIT_WINDOW_SECONDS?: string
}

/** A positive number (or positive integer) from `raw`, else `fallback`. */
export function positive(raw: string | undefined, fallback: number, integer = false): number {
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  const valid = Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value))
  return valid ? value : fallback
}

export function loadConfig(env: ConfigEnv): Config {
  const d = CONFIG_DEFAULTS
  return {
    deadlines: {
      readyTimeoutMs: positive(env.INFERENCE_READY_TIMEOUT_MS, DEADLINE_DEFAULTS.readyTimeoutMs),
      baseMs: positive(env.INFERENCE_DEADLINE_BASE_MS, DEADLINE_DEFAULTS.baseMs),
      perMegapixelMs: positive(env.INFERENCE_DEADLINE_PER_MP_MS, DEADLINE_DEFAULTS.perMegapixelMs),
      maxMs: positive(env.INFERENCE_DEADLINE_MAX_MS, DEADLINE_DEFAULTS.maxMs),
    },
    retry: {
      maxAttempts: positive(env.INFERENCE_MAX_ATTEMPTS, d.maxAttempts, true),
      baseMs: positive(env.INFERENCE_RETRY_BASE_MS, d.retryBaseMs),
      maxQueueWaitMs: d.maxQueueWaitMs,
      retryAfterMaxMs: positive(env.INFERENCE_RETRY_AFTER_MAX_MS, d.retryAfterMaxMs),
    },
    sseKeepaliveMs: positive(env.SSE_KEEPALIVE_MS, d.sseKeepaliveMs),
    sourceFetchTimeoutMs: positive(env.SOURCE_FETCH_TIMEOUT_MS, d.sourceFetchTimeoutMs),
    anonymousDailyRemovals: positive(env.ANONYMOUS_DAILY_REMOVALS, d.anonymousDailyRemovals, true),
    workspaceSlotLimit: positive(env.WORKSPACE_SLOT_LIMIT, d.workspaceSlotLimit, true),
    workspaceRequestsPerWindow: positive(env.RATE_LIMIT_PER_MINUTE, d.workspaceRequestsPerWindow, true),
    anonymousRequestsPerWindow: positive(env.RATE_LIMIT_ANONYMOUS_PER_MINUTE, d.anonymousRequestsPerWindow, true),
    rateWindowSeconds: positive(env.RATE_LIMIT_WINDOW_SECONDS, d.rateWindowSeconds, true),
  }
}
