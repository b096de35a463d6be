/**
 * @module
 * ProjectStream: one Durable Object per project, the log of its refinement and export events
 * (`image.refinement.completed.v1`, `image.export.completed.v1`) and the SSE watchers of
 * `GET /v1/projects/{id}/events`, kept by the shared `EventLog` (event-log.ts). A project has no
 * terminal state, so its stream stays open until the watcher leaves or the project is deleted.
 */
import { DurableObject } from 'cloudflare:workers'
import type { Env } from '../env'
import type { EventEnvelope } from '../lib/events'
import { EventLog } from './event-log'
import { loadConfig } from '../config'

export class ProjectStream extends DurableObject<Env> {
  readonly #log: EventLog

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    this.#log = new EventLog(ctx.storage.sql, loadConfig(env).sseKeepaliveMs)
    ctx.blockConcurrencyWhile(async () => this.#log.createTable())
  }

  /** Adds an event once (a retried publish changes nothing) and sends it to every watcher. */
  async append(event: EventEnvelope): Promise<void> {
    this.#log.append(event)
  }

  /** The project was deleted: watchers are let go and the log is forgotten. */
  async clear(): Promise<void> {
    this.#log.closeStreams()
    await this.ctx.storage.deleteAll()
  }

  /** Replays the log after `Last-Event-ID`, then streams live. */
  override async fetch(request: Request): Promise<Response> {
    return this.#log.stream(request.headers.get('last-event-id'), true)
  }
}
