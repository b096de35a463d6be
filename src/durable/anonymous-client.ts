/**
 * @module
 * AnonymousClient: one Durable Object per anonymous device and one per client IP. It keeps the
 * request-rate window and the daily removal allowance (SPEC.md §5: 7 per UTC day). Counting per IP
 * as well as per device means clearing or forging the cookie does not buy a fresh allowance.
 */
import { DurableObject } from 'cloudflare:workers'
import type { Env } from '../env'
import { secondsToUtcMidnight, takeFromWindow, utcDay, type Window, type WindowResult } from '../lib/window'

export interface Allowance {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the next UTC midnight. */
  reset: number
}

export class AnonymousClient extends DurableObject<Env> {
  /** Rate windows need no durability: losing one on eviction only forgives a minute. */
  #window: Window | undefined

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS allowance (day TEXT PRIMARY KEY, used INTEGER NOT NULL)')
    })
  }

  async hit(limit: number, windowSeconds: number): Promise<WindowResult> {
    const { window, result } = takeFromWindow(this.#window, limit, windowSeconds)
    this.#window = window
    return result
  }

  async allowance(limit: number): Promise<Allowance> {
    const used = this.#used()
    return { allowed: used < limit, limit, remaining: Math.max(0, limit - used), reset: secondsToUtcMidnight() }
  }

  /** Takes one removal from today's allowance, if any is left. */
  async take(limit: number): Promise<Allowance> {
    const used = this.#used()
    if (used >= limit) return { allowed: false, limit, remaining: 0, reset: secondsToUtcMidnight() }
    this.ctx.storage.sql.exec(
      'INSERT INTO allowance (day, used) VALUES (?, 1) ON CONFLICT(day) DO UPDATE SET used = used + 1',
      utcDay(),
    )
    this.ctx.storage.sql.exec('DELETE FROM allowance WHERE day < ?', utcDay())
    return { allowed: true, limit, remaining: limit - used - 1, reset: secondsToUtcMidnight() }
  }

  /** Gives back a removal taken for a request that was then refused elsewhere. */
  async refund(): Promise<void> {
    this.ctx.storage.sql.exec('UPDATE allowance SET used = MAX(0, used - 1) WHERE day = ?', utcDay())
  }

  #used(): number {
    return (
      this.ctx.storage.sql.exec<{ used: number }>('SELECT used FROM allowance WHERE day = ?', utcDay()).toArray()[0]
        ?.used ?? 0
    )
  }
}
