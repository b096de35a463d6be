/**
 * @module
 * Fixed-window counters, the arithmetic shared by the Durable Objects that rate-limit.
 */

export interface WindowResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets. */
  reset: number
}

export interface Window {
  start: number
  count: number
}

/** Counts one request against `limit` per `windowSeconds`; returns the updated window too. */
export function takeFromWindow(
  current: Window | undefined,
  limit: number,
  windowSeconds: number,
  now = Date.now(),
): { window: Window; result: WindowResult } {
  const size = windowSeconds * 1000
  const start = Math.floor(now / size) * size
  const window = current && current.start === start ? { ...current } : { start, count: 0 }
  const allowed = window.count < limit
  if (allowed) window.count += 1
  return {
    window,
    result: {
      allowed,
      limit,
      remaining: Math.max(0, limit - window.count),
      reset: Math.max(1, Math.ceil((start + size - now) / 1000)),
    },
  }
}

/**
 * When a credit period that is running at `now` ends: the first day of the next month, 00:00 UTC
 * (periods are calendar months), as the ISO string D1 stores.
 */
export function nextPeriodEnd(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()
}

/** The next UTC midnight, when daily allowances reset (epoch ms). */
export function nextUtcMidnight(now = Date.now()): number {
  const d = new Date(now)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
}

/** Seconds until the next UTC midnight. */
export function secondsToUtcMidnight(now = Date.now()): number {
  return Math.max(1, Math.ceil((nextUtcMidnight(now) - now) / 1000))
}

export function utcDay(now = Date.now()): string {
  return new Date(now).toISOString().slice(0, 10)
}
