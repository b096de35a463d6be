/**
 * @module
 * One webhook delivery of the WebhookOutbox (webhook-outbox.ts): its row in the object's SQLite
 * (the table in outbox-schema.ts, created by `DELIVERIES_SQL`), how GET …/deliveries shows it,
 * and its signed POST (Standard Webhooks headers, through the SSRF guard) with what came of it.
 */
import type { D1Row } from '../db/rows'
import { connectionFailureReason, withoutQuery } from '../lib/failure'
import { iso } from '../lib/time'
import type { WebhookDelivery } from '../schemas/webhook'
import { guardedPost, type Resolver, UnsafeUrlError } from '../services/ssrf'
import { DELIVERY_TIMEOUT_MS, parseRetryAfter, signDelivery } from '../services/webhooks'
import type { deliveries } from './outbox-schema'

/** A delivery as `SELECT *` gives it (outbox-schema.ts). */
export type DeliveryRow = D1Row<typeof deliveries>

/** The `deliveries` table of outbox-schema.ts, as the object creates it. */
export const DELIVERIES_SQL = [
  `CREATE TABLE IF NOT EXISTS deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    event_id TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    cycle_attempts INTEGER NOT NULL DEFAULT 0,
    response_status INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    delivered_at INTEGER,
    first_attempt_at INTEGER,
    last_attempt_at INTEGER,
    next_attempt_at INTEGER)`,
  'CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (next_attempt_at)',
]

const USER_AGENT = 'Cutout-Webhooks/1.0'

/** What one attempt came to: a 2xx, a failure worth a retry (after `retryAfterMs` if asked), or 410. */
export type Outcome = {
  kind: 'delivered' | 'failed' | 'gone'
  status: number | null
  error: string | null
  retryAfterMs?: number
}

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.response_status,
    lastError: row.last_error,
    createdAt: iso(row.created_at),
    deliveredAt: isoOrNull(row.delivered_at),
    lastAttemptAt: isoOrNull(row.last_attempt_at),
    nextAttemptAt: isoOrNull(row.next_attempt_at),
  }
}

/** One signed POST of a delivery; never throws. */
export async function sendDelivery(
  url: string,
  secret: string,
  row: DeliveryRow,
  now: number,
  resolver: Resolver,
  allowlist: string[],
): Promise<Outcome> {
  const timestamp = Math.floor(now / 1000)
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': row.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': await signDelivery(secret, timestamp, row.id, row.body),
  }
  let res: Response
  try {
    res = await guardedPost(url, {
      resolver,
      allowlist,
      headers,
      body: row.body,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    })
  } catch (err) {
    // Plain words, never the exception's text: it quotes the URL, query string and all.
    const error =
      err instanceof UnsafeUrlError
        ? `The webhook URL is not allowed now: ${err.reason}`
        : connectionFailureReason(err, DELIVERY_TIMEOUT_MS)
    return { kind: 'failed', status: null, error }
  }
  await res.body?.cancel().catch(() => undefined)
  if (res.status >= 200 && res.status < 300) return { kind: 'delivered', status: res.status, error: null }
  if (res.status === 410) {
    return { kind: 'gone', status: 410, error: 'The receiver answered 410 Gone; the endpoint is disabled' }
  }
  const location = res.headers.get('location')
  const error =
    res.status >= 300 && res.status < 400
      ? `Expected 2xx but received ${res.status}; redirects are not followed${location ? ` (Location: ${withoutQuery(location)})` : ''}`
      : `Expected 2xx but received ${res.status}`
  return { kind: 'failed', status: res.status, error, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) }
}
