/**
 * The job runner's retry policy (src/durable/retry-policy.ts) and the one config parse
 * (src/config.ts), as pure functions: every branch without a Durable Object or a server.
 * job-run.test.ts and failures.test.ts hold the runner to them through the API.
 */
import { describe, expect, it } from 'vitest'
import { CONFIG_DEFAULTS, loadConfig, positive } from '../../src/config'
import type { RetryConfig } from '../../src/config'
import { type AttemptFailure, backoffMs, decideRetry } from '../../src/durable/retry-policy'
import { InferenceFailure } from '../../src/services/inference'

const config: RetryConfig = { maxAttempts: 3, baseMs: 100, maxQueueWaitMs: 60_000, retryAfterMaxMs: 60_000 }
const NOW = 1_000_000
const fresh = { attempts: 0, queuedSince: NOW }
const half = () => 0.5
const call = (failure: Extract<AttemptFailure, { type: 'call' }>) => failure
const lost = call({ type: 'call', kind: 'transient', code: 'processor_unavailable', message: 'connection lost' })

describe('decideRetry', () => {
  it('retries a lost server with a growing backoff and keeps the first cause', () => {
    const first = decideRetry(fresh, lost, config, NOW, half)
    expect(first).toEqual({ action: 'retry', attempts: 1, failure: 'connection lost', delayMs: 75 })
    const second = decideRetry(
      { ...fresh, attempts: 1, failure: 'connection lost' },
      { ...lost, message: 'cut off' },
      config,
      NOW,
      half,
    )
    expect(second).toEqual({ action: 'retry', attempts: 2, failure: 'connection lost', delayMs: 150 })
  })

  it('fails processor_unavailable after maxAttempts, naming the first and the last cause', () => {
    const decision = decideRetry({ ...fresh, attempts: 2, failure: 'deadline' }, lost, config, NOW, half)
    expect(decision).toEqual({
      action: 'fail',
      error: {
        code: 'processor_unavailable',
        message: 'No inference server could take the job after 3 attempts: deadline; then connection lost',
      },
    })
  })

  it('keeps a job waiting for a busy server without spending attempts, until it waited too long', () => {
    const busy = call({
      type: 'call',
      kind: 'saturated',
      code: 'processor_unavailable',
      message: 'busy',
      retryAfter: 2,
    })
    expect(decideRetry(fresh, busy, config, NOW, half)).toEqual({ action: 'retry', attempts: 0, delayMs: 2000 })
    const late = NOW + config.maxQueueWaitMs + 1
    expect(decideRetry({ ...fresh, attempts: 2 }, busy, config, late, half)).toMatchObject({
      action: 'fail',
      error: { code: 'processor_unavailable' },
    })
  })

  it('fails at once with the input’s own code, or processing_failed for a fatal failure', () => {
    const bad = call({ type: 'call', kind: 'client', code: 'unsupported_media_type', message: 'not an image' })
    expect(decideRetry(fresh, bad, config, NOW)).toEqual({
      action: 'fail',
      error: { code: 'unsupported_media_type', message: 'not an image' },
    })
    const broke = call({ type: 'call', kind: 'fatal', code: 'processing_failed', message: 'model crashed' })
    expect(decideRetry(fresh, broke, config, NOW)).toEqual({
      action: 'fail',
      error: { code: 'processing_failed', message: 'model crashed' },
    })
  })

  it('spends an attempt when no server is reachable, none when the fleet is only busy', () => {
    const down: AttemptFailure = { type: 'not-ready', why: 'unavailable', retryAfter: 5 }
    const busy: AttemptFailure = { type: 'not-ready', why: 'saturated', retryAfter: 1 }
    expect(decideRetry(fresh, down, config, NOW, half)).toEqual({ action: 'retry', attempts: 1, delayMs: 5000 })
    expect(decideRetry({ ...fresh, attempts: 1 }, busy, config, NOW, half)).toEqual({
      action: 'retry',
      attempts: 1,
      delayMs: 1000,
    })
    expect(decideRetry({ ...fresh, attempts: 2, failure: 'frozen' }, down, config, NOW)).toEqual({
      action: 'fail',
      error: { code: 'processor_unavailable', message: 'frozen; no inference server was ready after that' },
    })
  })

  it('never waits less than Retry-After, up to retryAfterMaxMs', () => {
    expect(backoffMs(1, 3, config, () => 0)).toBe(3000)
    expect(backoffMs(1, 3, { ...config, retryAfterMaxMs: 10 }, () => 0)).toBe(50)
    // A server asking an hour holds the retry back a minute (by default), not past the queue-wait bound.
    expect(backoffMs(1, 3600, loadConfig({}).retry, () => 0)).toBe(60_000)
    expect(backoffMs(4, undefined, config, () => 1)).toBe(800)
  })
})

describe('InferenceFailure.kind: one classification for the runner and for calls a client waits on', () => {
  it('tells client, saturated, transient and fatal failures apart', () => {
    expect(new InferenceFailure('invalid_input', 'x', 400, false).kind).toBe('client')
    expect(new InferenceFailure('processor_unavailable', 'x', 503, true, 2).kind).toBe('saturated')
    expect(new InferenceFailure('processor_unavailable', 'x', 502, true).kind).toBe('transient')
    expect(new InferenceFailure('processing_failed', 'x', 500, false).kind).toBe('fatal')
  })
})

describe('loadConfig: one validation rule for every variable', () => {
  it('uses the default when a variable is unset, empty, not a number, zero or negative', () => {
    for (const raw of [undefined, '', ' ', 'abc', '0', '-5']) {
      expect(loadConfig({ SSE_KEEPALIVE_MS: raw }).sseKeepaliveMs).toBe(CONFIG_DEFAULTS.sseKeepaliveMs)
    }
    expect(loadConfig({ SSE_KEEPALIVE_MS: '200' }).sseKeepaliveMs).toBe(200)
  })

  it('wants whole numbers for counts', () => {
    expect(positive('2.5', 4, true)).toBe(4)
    expect(loadConfig({ WORKSPACE_SLOT_LIMIT: '2.5' }).workspaceSlotLimit).toBe(CONFIG_DEFAULTS.workspaceSlotLimit)
    expect(loadConfig({ WORKSPACE_SLOT_LIMIT: '2' }).workspaceSlotLimit).toBe(2)
    expect(loadConfig({ INFERENCE_MAX_ATTEMPTS: '3' }).retry.maxAttempts).toBe(3)
  })

  it('caps a Retry-After at a minute unless INFERENCE_RETRY_AFTER_MAX_MS says otherwise', () => {
    expect(loadConfig({}).retry.retryAfterMaxMs).toBe(60_000)
    expect(loadConfig({ INFERENCE_RETRY_AFTER_MAX_MS: '50' }).retry.retryAfterMaxMs).toBe(50)
  })
})
