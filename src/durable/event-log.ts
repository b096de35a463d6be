/**
 * @module
 * The one event log a Durable Object keeps for its SSE streams (a job's JobRun, a project's
 * ProjectStream): every event is stored once, in order, in the object's own SQLite; a stream
 * replays the log after `Last-Event-ID`, then receives each new event live, and a comment line
 * at a fixed interval while it is open, so proxies and browsers do not drop a stream that is
 * quiet for minutes (a queued job, a project between edits). Closing ends every open stream.
 */
import { type EventEnvelope, eventsAfter, formatSse } from '../lib/events'

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
}

const KEEPALIVE = ': keepalive\n\n'

export class EventLog {
  protected readonly sql: SqlStorage
  readonly #keepaliveMs: number
  #streams = new Set<WritableStreamDefaultWriter<Uint8Array>>()
  #encoder = new TextEncoder()
  #keepalive: ReturnType<typeof setInterval> | undefined

  /** `keepaliveMs`: a comment line this often keeps idle proxies from closing a quiet stream (config.ts). */
  constructor(sql: SqlStorage, keepaliveMs: number) {
    this.sql = sql
    this.#keepaliveMs = keepaliveMs
  }

  /**
   * Creates the log's table; call it inside `blockConcurrencyWhile` on start. `published` is the
   * job's webhook hand-off mark (job-events.ts); a project's log leaves it at 0 and never reads it,
   * and an older project table without the column still works, since only the job's log names it.
   */
  createTable(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,
      published INTEGER NOT NULL DEFAULT 0)`)
  }

  /** Stores the event and sends it to every open stream; false (and nothing sent) when its id is already logged. */
  append(event: EventEnvelope): boolean {
    const cursor = this.sql.exec(
      'INSERT OR IGNORE INTO events (id, body) VALUES (?, ?)',
      event.id,
      JSON.stringify(event),
    )
    if (cursor.rowsWritten === 0) return false
    this.#send(formatSse(event))
    return true
  }

  /**
   * An SSE response replaying the log after `lastEventId` (all of it when the id is unknown). When
   * `live` it stays open for new events and keepalives until `closeStreams`; otherwise it ends after the replay.
   */
  stream(lastEventId: string | null, live: boolean): Response {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    const writer = writable.getWriter()
    for (const event of eventsAfter(this.sql, lastEventId)) {
      void writer.write(this.#encoder.encode(formatSse(event))).catch(() => undefined)
    }
    if (live) {
      this.#streams.add(writer)
      this.#keepalive ??= setInterval(() => this.#send(KEEPALIVE), this.#keepaliveMs)
    } else {
      void writer.close().catch(() => undefined)
    }
    return new Response(readable, { headers: SSE_HEADERS })
  }

  /** Ends every open stream (the job is terminal, the project deleted) and stops the keepalives. */
  closeStreams(): void {
    for (const writer of this.#streams) void writer.close().catch(() => undefined)
    this.#streams.clear()
    this.#stopKeepalive()
  }

  /** Writes to every open stream; a stream whose reader left is dropped, and with the last one the keepalives stop. */
  #send(text: string): void {
    const bytes = this.#encoder.encode(text)
    for (const writer of this.#streams) {
      writer.write(bytes).catch(() => this.#streams.delete(writer))
    }
    if (this.#streams.size === 0) this.#stopKeepalive()
  }

  #stopKeepalive(): void {
    if (this.#keepalive === undefined) return
    clearInterval(this.#keepalive)
    this.#keepalive = undefined
  }
}
