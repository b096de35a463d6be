/**
 * @module
 * A job's event log, kept by its JobRun (DESIGN.md §1): every event is stored in order in the
 * runner's own SQLite, replayed to `GET /v1/jobs/{id}/events` after `Last-Event-ID`, written live
 * to the streams open on the job, and handed to the webhook outboxes once (all but SSE-only types).
 */
import type { Env } from '../env'
import { type EventEnvelope, eventsAfter, formatSse } from '../lib/events'
import { publishEvent } from '../services/events'

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
}

export class JobEventLog {
  readonly #sql: SqlStorage
  #streams = new Set<WritableStreamDefaultWriter<Uint8Array>>()
  #encoder = new TextEncoder()

  constructor(sql: SqlStorage) {
    this.#sql = sql
  }

  /** Creates the log's table; the runner calls it inside `blockConcurrencyWhile` on start. */
  createTable(): void {
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,
      published INTEGER NOT NULL DEFAULT 0)`)
  }

  /** Logs an event for the SSE stream (and, unless `sseOnly`, for webhooks), and sends it live. */
  record(event: EventEnvelope, sseOnly: boolean): void {
    const published = sseOnly ? 1 : 0
    this.#sql.exec(
      'INSERT INTO events (id, body, published) VALUES (?, ?, ?)',
      event.id,
      JSON.stringify(event),
      published,
    )
    const bytes = this.#encoder.encode(formatSse(event))
    for (const writer of this.#streams) {
      writer.write(bytes).catch(() => this.#streams.delete(writer))
    }
  }

  /**
   * An SSE response replaying the log after `lastEventId` (all of it when the id is unknown). It
   * stays open for live events while `live`, until `closeStreams`; otherwise it ends after the replay.
   */
  stream(lastEventId: string | null, live: boolean): Response {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    const writer = writable.getWriter()
    for (const event of eventsAfter(this.#sql, lastEventId)) {
      void writer.write(this.#encoder.encode(formatSse(event))).catch(() => undefined)
    }
    if (live) this.#streams.add(writer)
    else void writer.close().catch(() => undefined)
    return new Response(readable, { headers: SSE_HEADERS })
  }

  /** Ends every live stream: the job is terminal and its last event is written. */
  closeStreams(): void {
    for (const writer of this.#streams) void writer.close().catch(() => undefined)
    this.#streams.clear()
  }

  /** Hands every stored, not yet published event (but progress) to the webhook outboxes, in order. */
  async publishPending(env: Env): Promise<void> {
    const pending = this.#sql
      .exec<{ seq: number; body: string }>('SELECT seq, body FROM events WHERE published = 0 ORDER BY seq')
      .toArray()
    for (const row of pending) {
      await publishEvent(env, JSON.parse(row.body) as EventEnvelope)
      this.#sql.exec('UPDATE events SET published = 1 WHERE seq = ?', row.seq)
    }
  }
}
