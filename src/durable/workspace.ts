/**
 * @module
 * Workspace: one Durable Object per workspace (DESIGN.md §1). It grants running slots: at most
 * `WORKSPACE_SLOT_LIMIT` jobs of a workspace run at once and the rest wait in arrival order, so a
 * 100-image batch from one workspace never starves another workspace's single job.
 */
import { DurableObject } from 'cloudflare:workers'
import { loadConfig } from '../config'
import type { Env } from '../env'
import { takeFromWindow, type Window, type WindowResult } from '../lib/window'

/** How long a workspace's own rate limit (D1 `rate_limit_per_minute`) is trusted before rereading. */
const LIMIT_CACHE_MS = 60_000

export class Workspace extends DurableObject<Env> {
  /** The request-rate window lives in memory: losing it on eviction only forgives a minute. */
  #window: Window | undefined
  #override: { value: number | null; readAt: number } | undefined
  readonly #slotLimit: number
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    this.#slotLimit = loadConfig(env).workspaceSlotLimit
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS running (job_id TEXT PRIMARY KEY, since INTEGER NOT NULL)')
      ctx.storage.sql.exec(
        'CREATE TABLE IF NOT EXISTS waiting (seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL UNIQUE)',
      )
    })
  }

  /**
   * Asks for a running slot for `jobId`. True when it holds one (again, if asked twice); false
   * when it now waits in line: its JobRun is woken when a slot frees.
   */
  async acquire(jobId: string): Promise<boolean> {
    const sql = this.ctx.storage.sql
    if (sql.exec('SELECT 1 FROM running WHERE job_id = ?', jobId).toArray().length) return true
    sql.exec('INSERT OR IGNORE INTO waiting (job_id) VALUES (?)', jobId)
    await this.#grantFree(jobId)
    return sql.exec('SELECT 1 FROM running WHERE job_id = ?', jobId).toArray().length > 0
  }

  /** Gives up `jobId`'s slot or place in line, and hands free slots to those waiting longest. */
  async release(jobId: string): Promise<void> {
    this.ctx.storage.sql.exec('DELETE FROM running WHERE job_id = ?', jobId)
    this.ctx.storage.sql.exec('DELETE FROM waiting WHERE job_id = ?', jobId)
    await this.#grantFree()
  }

  /** Counts one request against the workspace's limit per window (its own, or `defaultLimit`). */
  async hit(workspaceId: string, defaultLimit: number, windowSeconds = 60): Promise<WindowResult> {
    const limit = (await this.#limitOverride(workspaceId)) ?? defaultLimit
    const { window, result } = takeFromWindow(this.#window, limit, windowSeconds)
    this.#window = window
    return result
  }

  async #limitOverride(workspaceId: string): Promise<number | null> {
    if (this.#override && Date.now() - this.#override.readAt < LIMIT_CACHE_MS) return this.#override.value
    const row = await this.env.DB.prepare('SELECT rate_limit_per_minute AS n FROM workspaces WHERE id = ?')
      .bind(workspaceId)
      .first<{ n: number | null }>()
    this.#override = { value: row?.n ?? null, readAt: Date.now() }
    return this.#override.value
  }

  /** Running and waiting counts, for tests and operators. */
  async snapshot(): Promise<{ running: string[]; waiting: string[]; limit: number }> {
    const sql = this.ctx.storage.sql
    return {
      running: sql
        .exec<{ job_id: string }>('SELECT job_id FROM running ORDER BY since')
        .toArray()
        .map((r) => r.job_id),
      waiting: sql
        .exec<{ job_id: string }>('SELECT job_id FROM waiting ORDER BY seq')
        .toArray()
        .map((r) => r.job_id),
      limit: this.#limit(),
    }
  }

  /** Moves the longest-waiting jobs into free slots and wakes them (except `caller`, who is asking). */
  async #grantFree(caller?: string): Promise<void> {
    const sql = this.ctx.storage.sql
    const granted: string[] = []
    while (this.#running() < this.#limit()) {
      const next = sql
        .exec<{ seq: number; job_id: string }>('SELECT seq, job_id FROM waiting ORDER BY seq LIMIT 1')
        .toArray()[0]
      if (!next) break
      sql.exec('DELETE FROM waiting WHERE seq = ?', next.seq)
      sql.exec('INSERT OR IGNORE INTO running (job_id, since) VALUES (?, ?)', next.job_id, Date.now())
      granted.push(next.job_id)
    }
    // A lost wake-up is harmless: a waiting JobRun also re-asks on its own alarm.
    const toWake = granted.filter((id) => id !== caller)
    await Promise.allSettled(toWake.map((id) => this.env.JOB_RUN.get(this.env.JOB_RUN.idFromName(id)).wake()))
  }

  #running(): number {
    return this.ctx.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM running').one().n
  }

  #limit(): number {
    return this.#slotLimit
  }
}
