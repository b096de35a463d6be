/**
 * @module
 * ProjectStream: one Durable Object per project, the log of its refinement and export events
 * (`image.refinement.completed.v1`, `image.export.completed.v1`) and the SSE watchers of
 * `GET /v1/projects/{id}/events`. A project has no terminal state, so its stream stays open
 * until the watcher leaves or the project is deleted.
 */
import { DurableObject } from 'cloudflare:workers'
import type { Env } from '../env'
import { type EventEnvelope, eventsAfter, formatSse } from '../lib/events'

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' }
/** A comment line this often keeps idle proxies from closing a quiet stream. */
const KEEPALIVE_MS = 25_000

export class ProjectStream extends DurableObject<Env> {
  #streams = new Set<WritableStreamDefaultWriter<Uint8Array>>()
  #encoder = new TextEncoder()
  #keepalive: ReturnType<typeof setInterval> | undefined

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL)`)
    })
  }

  /** Adds an event once (a retried publish changes nothing) and sends it to every watcher. */
  async append(event: EventEnvelope): Promise<void> {
    const cursor = this.ctx.storage.sql.exec(
      'INSERT OR IGNORE INTO events (id, body) VALUES (?, ?)',
      event.id,
      JSON.stringify(event),
    )
    if (cursor.rowsWritten === 0) return
    this.#send(formatSse(event))
  }

  /** The project was deleted: watchers are let go and the log is forgotten. */
  async clear(): Promise<void> {
    for (const writer of this.#streams) void writer.close().catch(() => undefined)
    this.#streams.clear()
    await this.ctx.storage.deleteAll()
  }

  /** Replays the log after `Last-Event-ID`, then streams live. */
  override async fetch(request: Request): Promise<Response> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    const writer = writable.getWriter()
    for (const event of eventsAfter(this.ctx.storage.sql, request.headers.get('last-event-id'))) {
      void writer.write(this.#encoder.encode(formatSse(event))).catch(() => undefined)
    }
    this.#streams.add(writer)
    this.#keepalive ??= setInterval(() => this.#send(': keepalive\n\n'), KEEPALIVE_MS)
    return new Response(readable, { headers: SSE_HEADERS })
  }

  #send(text: string): void {
    const bytes = this.#encoder.encode(text)
    for (const writer of this.#streams) {
      writer.write(bytes).catch(() => this.#streams.delete(writer))
    }
    if (this.#streams.size === 0 && this.#keepalive) {
      clearInterval(this.#keepalive)
      this.#keepalive = undefined
    }
  }
}
