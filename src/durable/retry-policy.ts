/**
 * @module
 * The job runner's retry policy as a pure function (DESIGN.md §3 "Never lose a job"): given where a
 * job stands and why its attempt did not run or did not finish, it says whether to try again (and
 * when) or to fail (and with which problem). The runner (job-run.ts) only carries the decision out,
 * so every branch is tested here without a Durable Object (test/worker/retry-policy.test.ts).
 */
import type { RetryConfig } from '../config'
import type { FailureKind } from '../services/inference-failure'

/** Where the job stands: its spent attempts, when it was queued, and the first failure's cause. */
export interface RetryState {
  attempts: number
  queuedSince: number
  failure?: string
}

/** Why the attempt did not finish: a call that failed, or no server ready to take it. */
export type AttemptFailure =
  | { type: 'call'; kind: FailureKind; code: string; message: string; retryAfter?: number }
  | { type: 'not-ready'; why: 'saturated' | 'unavailable'; retryAfter?: number }

export type RetryDecision =
  /** Try again after `delayMs`, with the job's attempts and first cause updated to these. */
  | { action: 'retry'; delayMs: number; attempts: number; failure?: string }
  | { action: 'fail'; error: { code: string; message: string } }

/** The first failed call's cause and the last one's, once when they are the same. */
const causes = (first: string | undefined, last: string) => (first && first !== last ? `${first}; then ${last}` : last)

/**
 * The decision for one attempt that did not finish. `now` and `random` are the clock and the
 * jitter, passed in so the function is deterministic under test.
 */
export function decideRetry(
  state: RetryState,
  failure: AttemptFailure,
  config: RetryConfig,
  now: number,
  random: () => number = Math.random,
): RetryDecision {
  const waitedTooLong = now - state.queuedSince > config.maxQueueWaitMs
  const retry = (attempts: number, retryAfter?: number, failureCause = state.failure): RetryDecision => ({
    action: 'retry',
    attempts,
    failure: failureCause,
    delayMs: backoffMs(Math.max(1, attempts), retryAfter, config, random),
  })
  if (failure.type === 'not-ready') {
    // A busy fleet is not a failure: the job keeps its place and does not use up its attempts.
    const attempts = failure.why === 'saturated' ? state.attempts : state.attempts + 1
    if ((failure.why === 'unavailable' && attempts >= config.maxAttempts) || waitedTooLong) {
      return {
        action: 'fail',
        error: {
          code: 'processor_unavailable',
          message: state.failure
            ? `${state.failure}; no inference server was ready after that`
            : 'No inference server is available',
        },
      }
    }
    return retry(attempts, failure.retryAfter)
  }
  switch (failure.kind) {
    case 'saturated':
      // "Busy, retry after": the job keeps its place without spending an attempt, bounded only
      // by how long it may wait for capacity; past that it is a lost server like any other.
      if (!waitedTooLong) return retry(state.attempts, failure.retryAfter)
      return retryOrGiveUp(state, failure, config, retry)
    case 'transient':
      return retryOrGiveUp(state, failure, config, retry)
    case 'client':
      return { action: 'fail', error: { code: failure.code, message: failure.message } }
    case 'fatal':
      return { action: 'fail', error: { code: 'processing_failed', message: failure.message } }
  }
}

function retryOrGiveUp(
  state: RetryState,
  failure: { message: string; retryAfter?: number },
  config: RetryConfig,
  retry: (attempts: number, retryAfter?: number, failureCause?: string) => RetryDecision,
): RetryDecision {
  if (state.attempts + 1 < config.maxAttempts) {
    return retry(state.attempts + 1, failure.retryAfter, state.failure ?? failure.message)
  }
  return {
    action: 'fail',
    error: {
      code: 'processor_unavailable',
      message: `No inference server could take the job after ${config.maxAttempts} attempts: ${causes(state.failure, failure.message)}`,
    },
  }
}

/**
 * Exponential backoff with full jitter over its upper half, never sooner than the server's
 * Retry-After (up to `retryAfterMaxMs`).
 */
export function backoffMs(
  attempt: number,
  retryAfterSeconds: number | undefined,
  config: Pick<RetryConfig, 'baseMs' | 'retryAfterMaxMs'>,
  random: () => number = Math.random,
): number {
  const exp = config.baseMs * 2 ** (attempt - 1)
  const jittered = exp / 2 + random() * (exp / 2)
  const asked = retryAfterSeconds === undefined ? 0 : Math.min(retryAfterSeconds * 1000, config.retryAfterMaxMs)
  return Math.max(jittered, asked)
}
