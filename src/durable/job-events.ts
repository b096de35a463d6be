/**
 * @module
 * A job's event log, kept by its JobRun (DESIGN.md §1): the shared `EventLog` (event-log.ts:
 * stored in order, replayed to `GET /v1/jobs/{id}/events` after `Last-Event-ID`, sent live with
 * keepalives), plus the job's webhook hand-off: every event but the SSE-only types goes to the
 * webhook outboxes once.
 */
import type { Env } from '../env'
import type { EventEnvelope } from '../lib/events'
import { publishEvent } from '../services/events'
import { EventLog } from './event-log'

export class JobEventLog extends EventLog {
  /** Logs an event for the SSE stream (and, unless `sseOnly`, for webhooks), and sends it live. */
  record(event: EventEnvelope, sseOnly: boolean): void {
    if (this.append(event) && sseOnly) this.sql.exec('UPDATE events SET published = 1 WHERE id = ?', event.id)
  }

  /** Hands every stored, not yet published event (but progress) to the webhook outboxes, in order. */
  async publishPending(env: Env): Promise<void> {
    const pending = this.sql
      .exec<{ seq: number; body: string }>('SELECT seq, body FROM events WHERE published = 0 ORDER BY seq')
      .toArray()
    for (const row of pending) {
      await publishEvent(env, JSON.parse(row.body) as EventEnvelope)
      this.sql.exec('UPDATE events SET published = 1 WHERE seq = ?', row.seq)
    }
  }
}
