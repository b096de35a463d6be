/**
 * @module
 * WebhookOutbox: one Durable Object per webhook endpoint (DESIGN.md §1), named by the endpoint id.
 * It keeps one delivery per event (the event id is the dedupe key, so a retried publish stores
 * nothing new), sends signed POSTs through the SSRF guard, and retries failures on its alarm on
 * the schedule of DESIGN.md §3 for 24 hours. Everything lives in the object's SQLite storage, so
 * pending retries survive eviction and restarts; one alarm is set, for the earliest due delivery.
 *
 * The endpoint's URL and encrypted secret are read from D1 at every delivery run, so a DELETE (or
 * a 410 that disabled it) takes effect at once: open deliveries then fail with `endpoint disabled`.
 */
import { DurableObject } from 'cloudflare:workers'
import type { Env } from '../env'
import { DAY_MS } from '../lib/time'
import type { WebhookDelivery } from '../schemas/webhook'
import { allowlistFromEnv, DohResolver, type Resolver } from '../services/ssrf'
import {
  decryptSecret,
  DELIVERY_TIMEOUT_MS,
  disableEndpoint,
  nextAttemptAt,
  RETRY_WINDOW_MS,
  type WebhookEndpointRow,
} from '../services/webhooks'
import type { EventEnvelope } from '../lib/events'
import { errorSummary } from '../lib/failure'
import { log } from '../lib/log'
import { DELIVERIES_SQL, type DeliveryRow, type Outcome, sendDelivery, toDelivery } from './webhook-delivery'

/** GET …/deliveries shows this many, newest first (SPEC.md §8). */
const LIST_LIMIT = 100
/** Deliveries attempted per alarm run; more due ones get an immediate follow-up alarm. */
const MAX_PER_RUN = 50
/** Attempts in flight at once (each may take up to the 15 s timeout). */
const PARALLEL = 10
/** Finished deliveries are kept this long (history and event-id dedupe), then pruned. */
const HISTORY_MS = 30 * DAY_MS
/** When D1 or the secret cannot be read, the run is retried after this long. */
const RUN_RETRY_MS = 30_000
/** If an attempt is interrupted past the last scheduled one, it is settled this long after. */
const INTERRUPTED_GRACE_MS = DELIVERY_TIMEOUT_MS + 60_000

export class WebhookOutbox extends DurableObject<Env> {
  /** Deliveries whose POST is under way (an early alarm run in tests must not send them twice). */
  #inFlight = new Set<string>()
  /** Replays asked for while an attempt was in flight: requeued once it settles. */
  #replayAfterAttempt = new Set<string>()

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    ctx.blockConcurrencyWhile(async () => {
      const sql = ctx.storage.sql
      sql.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
      for (const statement of DELIVERIES_SQL) sql.exec(statement)
    })
  }

  /**
   * Stores a delivery of `event` and schedules it for now. Idempotent per event id: the same
   * event again returns the existing delivery and changes nothing.
   */
  async enqueue(endpointId: string, event: EventEnvelope): Promise<{ deliveryId: string; created: boolean }> {
    this.#setMeta('endpoint_id', endpointId)
    const sql = this.ctx.storage.sql
    const existing = sql.exec<{ id: string }>('SELECT id FROM deliveries WHERE event_id = ?', event.id).toArray()[0]
    if (existing) return { deliveryId: existing.id, created: false }
    const id = crypto.randomUUID()
    const now = Date.now()
    sql.exec(
      `INSERT INTO deliveries (id, event_id, event_type, body, status, created_at, next_attempt_at)
       VALUES (?, ?, ?, ?, 'pending', ?, ?)`,
      id,
      event.id,
      event.type,
      JSON.stringify(event),
      now,
      now,
    )
    await this.#schedule()
    return { deliveryId: id, created: true }
  }

  /** The latest deliveries, newest first. */
  async list(limit = LIST_LIMIT): Promise<WebhookDelivery[]> {
    return this.ctx.storage.sql
      .exec<DeliveryRow>('SELECT * FROM deliveries ORDER BY seq DESC LIMIT ?', Math.min(limit, LIST_LIMIT))
      .toArray()
      .map(toDelivery)
  }

  /**
   * Requeues a delivery, same id, for an immediate attempt with a fresh 24 h retry window
   * (SPEC.md §3: failed or delivered → pending). Returns null for an unknown id.
   */
  async replay(deliveryId: string): Promise<{ id: string; status: 'pending' } | null> {
    const sql = this.ctx.storage.sql
    const row = sql.exec<{ id: string }>('SELECT id FROM deliveries WHERE id = ?', deliveryId).toArray()[0]
    if (!row) return null
    if (this.#inFlight.has(deliveryId)) this.#replayAfterAttempt.add(deliveryId)
    else this.#requeue(deliveryId)
    await this.#schedule()
    return { id: deliveryId, status: 'pending' }
  }

  /** The endpoint was deleted: its open deliveries fail now instead of at their next attempt. */
  async stop(reason: string): Promise<void> {
    this.#failOpen(`endpoint disabled (${reason})`)
    await this.#schedule()
  }

  override async alarm(): Promise<void> {
    const now = Date.now()
    // The alarm is for whatever was due at its scheduled time; tests run it early on purpose.
    const dueBy = Math.max(now, Number(this.#meta('alarm_at') ?? 0))
    this.#deleteMeta('alarm_at')
    const sql = this.ctx.storage.sql
    sql.exec('DELETE FROM deliveries WHERE next_attempt_at IS NULL AND created_at < ?', now - HISTORY_MS)
    const endpointId = this.#meta('endpoint_id')
    const due = endpointId
      ? sql
          .exec<DeliveryRow>(
            'SELECT * FROM deliveries WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?',
            dueBy,
            MAX_PER_RUN,
          )
          .toArray()
          .filter((row) => !this.#inFlight.has(row.id))
      : []
    if (endpointId && due.length > 0) {
      try {
        await this.#run(endpointId, due)
      } catch (err) {
        log('warn', 'webhook run failed, will retry', { endpointId, error: errorSummary(err) })
        return this.#schedule(Date.now() + RUN_RETRY_MS)
      }
    }
    await this.#schedule()
  }

  /** Attempts the due deliveries against the endpoint as D1 has it now. */
  async #run(endpointId: string, due: DeliveryRow[]): Promise<void> {
    const endpoint = await this.env.DB.prepare('SELECT * FROM webhook_endpoints WHERE id = ?')
      .bind(endpointId)
      .first<WebhookEndpointRow>()
    if (!endpoint || endpoint.disabled_at) {
      this.#failOpen(`endpoint disabled (${endpoint?.disabled_reason ?? 'not found'})`)
      return
    }
    const secret = await decryptSecret(this.env.DATA_ENCRYPTION_KEY, endpoint.secret_ciphertext, endpoint.id)
    const resolver = new DohResolver({ url: this.env.DNS_RESOLVER_URL })
    const allowlist = allowlistFromEnv(this.env)
    for (let i = 0; i < due.length; i += PARALLEL) {
      const chunk = due.slice(i, i + PARALLEL)
      const outcomes = await Promise.all(chunk.map((row) => this.#attempt(endpoint, secret, row, resolver, allowlist)))
      if (outcomes.includes('gone')) {
        // 410: the receiver says this endpoint is gone for good (DESIGN.md §3).
        await disableEndpoint(this.env.DB, endpoint.id, 'gone')
        this.#failOpen('endpoint disabled: the receiver answered 410 Gone')
        return
      }
    }
  }

  async #attempt(
    endpoint: WebhookEndpointRow,
    secret: string,
    row: DeliveryRow,
    resolver: Resolver,
    allowlist: string[],
  ): Promise<Outcome['kind']> {
    const sql = this.ctx.storage.sql
    const started = Date.now()
    const firstAttemptAt = row.first_attempt_at ?? started
    if (
      row.cycle_attempts > 0 &&
      row.last_attempt_at !== null &&
      row.last_attempt_at >= firstAttemptAt + RETRY_WINDOW_MS
    ) {
      // The last attempt of the window was interrupted (restart); the window is over.
      this.#settle(
        row.id,
        'failed',
        null,
        `${row.last_error ?? 'attempt interrupted'}; gave up 24 h after the first attempt`,
      )
      return 'failed'
    }
    const cycle = row.cycle_attempts + 1
    // Written before sending: if this attempt is cut short (eviction, restart), it still counts
    // and the retry after it is already scheduled.
    const provisional = nextAttemptAt(cycle, firstAttemptAt, started) ?? started + INTERRUPTED_GRACE_MS
    sql.exec(
      `UPDATE deliveries SET attempts = attempts + 1, cycle_attempts = ?, first_attempt_at = ?, last_attempt_at = ?,
         next_attempt_at = ? WHERE id = ?`,
      cycle,
      firstAttemptAt,
      started,
      provisional,
      row.id,
    )
    this.#inFlight.add(row.id)
    let outcome: Outcome
    try {
      outcome = await sendDelivery(endpoint.url, secret, row, started, resolver, allowlist)
    } finally {
      this.#inFlight.delete(row.id)
    }
    if (outcome.kind === 'delivered') {
      this.#settle(row.id, 'delivered', outcome.status, null, Date.now())
    } else if (outcome.kind === 'gone') {
      this.#settle(row.id, 'failed', outcome.status, outcome.error)
    } else {
      const next = nextAttemptAt(cycle, firstAttemptAt, started, outcome.retryAfterMs)
      if (next === null) {
        this.#settle(row.id, 'failed', outcome.status, `${outcome.error}; gave up 24 h after the first attempt`)
      } else {
        sql.exec(
          "UPDATE deliveries SET status = 'retrying', response_status = ?, last_error = ?, next_attempt_at = ? WHERE id = ?",
          outcome.status,
          outcome.error,
          next,
          row.id,
        )
      }
    }
    if (this.#replayAfterAttempt.delete(row.id)) this.#requeue(row.id)
    return outcome.kind
  }

  #settle(
    id: string,
    status: 'delivered' | 'failed',
    responseStatus: number | null,
    error: string | null,
    deliveredAt?: number,
  ) {
    this.ctx.storage.sql.exec(
      `UPDATE deliveries SET status = ?, response_status = COALESCE(?, response_status), last_error = ?,
         delivered_at = COALESCE(?, delivered_at), next_attempt_at = NULL WHERE id = ?`,
      status,
      responseStatus,
      error,
      deliveredAt ?? null,
      id,
    )
  }

  #requeue(id: string): void {
    this.ctx.storage.sql.exec(
      `UPDATE deliveries SET status = 'pending', cycle_attempts = 0, first_attempt_at = NULL, next_attempt_at = ?
       WHERE id = ?`,
      Date.now(),
      id,
    )
  }

  /** Every open delivery fails: the endpoint no longer accepts them. */
  #failOpen(reason: string): void {
    const sql = this.ctx.storage.sql
    const open = sql.exec<{ id: string }>('SELECT id FROM deliveries WHERE next_attempt_at IS NOT NULL').toArray()
    for (const { id } of open) {
      if (!this.#inFlight.has(id)) this.#settle(id, 'failed', null, reason)
    }
  }

  /** One alarm, for the earliest open delivery (never before `notBefore`); none when all are done. */
  async #schedule(notBefore = 0): Promise<void> {
    const next = this.ctx.storage.sql
      .exec<{ at: number | null }>(
        'SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE next_attempt_at IS NOT NULL',
      )
      .one().at
    if (next === null) {
      this.#deleteMeta('alarm_at')
      await this.ctx.storage.deleteAlarm()
      return
    }
    const at = Math.max(next, notBefore)
    this.#setMeta('alarm_at', String(at))
    await this.ctx.storage.setAlarm(at)
  }

  #meta(key: string): string | undefined {
    return this.ctx.storage.sql.exec<{ value: string }>('SELECT value FROM meta WHERE key = ?', key).toArray()[0]?.value
  }

  #setMeta(key: string, value: string): void {
    this.ctx.storage.sql.exec(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      key,
      value,
    )
  }

  #deleteMeta(key: string): void {
    this.ctx.storage.sql.exec('DELETE FROM meta WHERE key = ?', key)
  }
}
