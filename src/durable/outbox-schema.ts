/**
 * @module
 * The WebhookOutbox's own SQLite table (a Durable Object's storage, not D1), declared with drizzle
 * like src/db/schema.ts so its row type is derived (`D1Row`, src/db/rows.ts), not spelled by hand.
 * Type-only, like schema.ts: the object creates the table with `DELIVERIES_SQL`
 * (webhook-delivery.ts), and test/worker/webhooks.test.ts holds the two to the same columns.
 */
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { DELIVERY_STATUSES } from '../schemas/webhook'

/** One delivery per event (the event id is the dedupe key); times are ms since the epoch. */
export const deliveries = sqliteTable(
  'deliveries',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    eventId: text('event_id').notNull().unique(),
    eventType: text('event_type').notNull(),
    body: text('body').notNull(),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull(),
    /** Every attempt ever made with this delivery id (replays included). */
    attempts: integer('attempts').notNull().default(0),
    /** Attempts since the delivery was (re)queued: drives the retry schedule. */
    cycleAttempts: integer('cycle_attempts').notNull().default(0),
    responseStatus: integer('response_status'),
    lastError: text('last_error'),
    createdAt: integer('created_at').notNull(),
    deliveredAt: integer('delivered_at'),
    firstAttemptAt: integer('first_attempt_at'),
    lastAttemptAt: integer('last_attempt_at'),
    /** Set while pending or retrying; null once delivered or failed. */
    nextAttemptAt: integer('next_attempt_at'),
  },
  (t) => [index('deliveries_due').on(t.nextAttemptAt)],
)
