/**
 * @module
 * Retention (SPEC.md §8; docs/decisions.md "Retention"). Every kind of stored bytes goes
 * at its time: job and export results and catalog images 24 hours after they were made (their rows
 * stay and reads answer 410 `asset_expired`), a job's own source with its result (at once for a
 * job that failed or was canceled), an upload's bytes once it is a day old and no job still needs
 * them. A project's bytes (`projects/<id>/…`) stay until the project is deleted. Rows that only
 * hold secrets or short-lived state go too (`pruneStateRows`). Runs on the cron trigger
 * (`sweepRetention`); R2 lifecycle rules back it up in production (docs/deploy.md).
 */
import type { Env } from '../env'
import { deleteByPrefix } from '../lib/storage'
import { DAY_MS, iso } from '../lib/time'
import { settleAbandonedCatalogImages } from './catalog'
import { CODE_WINDOW_MS } from './email-sign-in'
import { jobSourcePrefix } from './job-sources'
import { unfinishedSql } from './job-store'
import { log } from '../lib/log'

type SweepEnv = Pick<Env, 'DB' | 'BUCKET'>

/** Rows handled per statement, and statements per run, so one run stays short; the next continues. */
const SWEEP_BATCH = 100
const MAX_BATCHES = 20

/** An upload's bytes are kept a day (its reservation is an hour) for the jobs that name it. */
export const UPLOAD_RETENTION_MS = DAY_MS

/** Everything the cron trigger does, each part on its own so one failing does not stop the rest. */
export async function sweepRetention(env: SweepEnv, now = new Date()): Promise<void> {
  const parts = {
    results: sweepExpiredResults(env, now),
    catalogImages: sweepExpiredCatalogImages(env, now),
    abandonedCatalogImages: settleAbandonedCatalogImages(env, now.getTime()),
    jobSources: sweepJobSources(env, now),
    uploads: sweepUploads(env, now),
    stateRows: pruneStateRows(env.DB, now),
  }
  const settled = await Promise.allSettled(Object.values(parts))
  settled.forEach((outcome, i) => {
    if (outcome.status === 'rejected') {
      const part = Object.keys(parts)[i]
      log('error', 'retention sweep failed', { sweep: part, error: String(outcome.reason) })
    }
  })
}

/** Repeats `step` (which handles up to SWEEP_BATCH rows) until a short batch; returns the total. */
async function drain(step: () => Promise<number>): Promise<number> {
  let total = 0
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await step()
    total += n
    if (n < SWEEP_BATCH) break
  }
  return total
}

/** Result bytes of every job kind (removals, try-ons, a project's exports) past `expires_at`. */
export async function sweepExpiredResults(env: SweepEnv, now = new Date()): Promise<number> {
  return drain(() => sweepTable(env, 'jobs', now))
}

export async function sweepExpiredCatalogImages(env: SweepEnv, now = new Date()): Promise<number> {
  return drain(() => sweepTable(env, 'catalog_images', now))
}

/** Deletes the bytes of rows past `expires_at` and marks them, a batch at a time. */
async function sweepTable(env: SweepEnv, table: 'jobs' | 'catalog_images', now: Date) {
  // A project's bytes are never a job's to expire (they live until the project is deleted).
  const { results } = await env.DB.prepare(
    `SELECT id, result_key FROM ${table} WHERE expires_at <= ? AND result_key IS NOT NULL
       AND result_key NOT LIKE 'projects/%' AND result_deleted_at IS NULL LIMIT ?`,
  )
    .bind(now.toISOString(), SWEEP_BATCH)
    .all<{ id: string; result_key: string }>()
  if (!results.length) return 0
  await env.BUCKET.delete(results.map((r) => r.result_key))
  await env.DB.batch(
    results.map((r) =>
      env.DB.prepare(`UPDATE ${table} SET result_deleted_at = ? WHERE id = ?`).bind(now.toISOString(), r.id),
    ),
  )
  return results.length
}

/**
 * A job's own source (`sources/<id>`, and each image of a try-on under it) goes with its result:
 * once the result expired, or at once when the job failed or was canceled. Until then a project
 * may still be made from the job, which copies the source. Uploads are not a job's own
 * (`sweepUploads`), and a project's refinements and exports read the project's copy.
 */
export async function sweepJobSources(env: SweepEnv, now = new Date()): Promise<number> {
  return drain(async () => {
    const { results } = await env.DB.prepare(
      `SELECT id FROM jobs WHERE source_key LIKE 'sources/%' AND source_deleted_at IS NULL
         AND ((status = 'succeeded' AND expires_at <= ?1) OR (status IN ('failed', 'canceled') AND completed_at <= ?1))
       LIMIT ?2`,
    )
      .bind(now.toISOString(), SWEEP_BATCH)
      .all<{ id: string }>()
    for (const { id } of results) await deleteByPrefix(env.BUCKET, jobSourcePrefix(id))
    if (results.length) {
      await env.DB.batch(
        results.map((r) =>
          env.DB.prepare('UPDATE jobs SET source_deleted_at = ? WHERE id = ?').bind(now.toISOString(), r.id),
        ),
      )
    }
    return results.length
  })
}

/**
 * The jobs that still need an upload's bytes (at `key`, SQL) at `now` (SQL): running, or their
 * result kept. Any source a job reads counts (`job_sources`: a try-on's garment as well as its person).
 */
const jobsNeedingUpload = (key: string, now: string) => `SELECT 1 FROM job_sources s JOIN jobs j ON j.id = s.job_id
  WHERE s.source_key = ${key}
    AND (${unfinishedSql('j.status')} OR (j.status = 'succeeded' AND j.expires_at > ${now}))`

/**
 * Uploads a day old whose bytes no job still needs: none queued or running, none whose result (and
 * so the chance to make a project from it) is still kept. The row goes with the bytes; naming the
 * upload afterwards is 400 "No upload … in this workspace". A reservation that never completed
 * goes once it expired (bytes a presigned PUT may have left included).
 */
export async function sweepUploads(env: SweepEnv, now = new Date()): Promise<number> {
  const at = now.toISOString()
  return drain(async () => {
    const { results } = await env.DB.prepare(
      `SELECT u.id, u.object_key FROM uploads u
        WHERE (u.status = 'pending' AND u.expires_at <= ?1)
           OR (u.created_at <= ?2 AND NOT EXISTS (${jobsNeedingUpload('u.object_key', '?1')}))
        LIMIT ?3`,
    )
      .bind(at, iso(now.getTime() - UPLOAD_RETENTION_MS), SWEEP_BATCH)
      .all<{ id: string; object_key: string }>()
    if (!results.length) return 0
    // A removal may have made a job over the upload since the select: each row is deleted only if
    // still no job needs it (asked again in its own statement), and only then its bytes. Bytes a
    // failed delete leaves are the `uploads/` lifecycle rule's (docs/deploy.md).
    const deleted = await env.DB.batch(
      results.map((r) =>
        env.DB.prepare(`DELETE FROM uploads WHERE id = ?1 AND NOT EXISTS (${jobsNeedingUpload('?3', '?2')})`).bind(
          r.id,
          at,
          r.object_key,
        ),
      ),
    )
    const gone = results.filter((_, i) => deleted[i].meta.changes === 1)
    if (gone.length) await env.BUCKET.delete(gone.map((r) => r.object_key))
    return results.length
  })
}

/**
 * Rows that only hold secrets or short-lived state, once they can no longer be used:
 * - refresh tokens past `expires_at` (a used one only served reuse detection until then);
 * - sessions that were revoked, or whose refresh tokens have all expired (their access tokens,
 *   1 hour at most, expired long before);
 * - email challenges past their code and past the per-email sending window (the row also counts
 *   codes sent; dropping it earlier would let more codes out);
 * - device authorizations a day past expiry; idempotency records past their 24 hours.
 * Returns the rows deleted.
 */
export async function pruneStateRows(db: D1Database, now = new Date()): Promise<number> {
  const at = now.toISOString()
  // An access token lives an hour; a session younger than that may still be writing its first token.
  const settled = iso(now.getTime() - 60 * 60_000)
  const deadSessions = `SELECT s.id FROM sessions s WHERE s.created_at <= ?2 AND (s.revoked_at IS NOT NULL
      OR NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = s.id AND r.expires_at > ?1))`
  const results = await db.batch([
    // Tokens first: they reference their session.
    db
      .prepare(`DELETE FROM refresh_tokens WHERE expires_at <= ?1 OR session_id IN (${deadSessions})`)
      .bind(at, settled),
    db.prepare(`DELETE FROM sessions WHERE id IN (${deadSessions})`).bind(at, settled),
    db
      .prepare('DELETE FROM email_challenges WHERE expires_at <= ?1 AND window_started_at <= ?2')
      .bind(at, iso(now.getTime() - CODE_WINDOW_MS)),
    db.prepare('DELETE FROM device_authorizations WHERE expires_at <= ?').bind(iso(now.getTime() - DAY_MS)),
    db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?').bind(at),
  ])
  return results.reduce((n, r) => n + (r.meta.changes ?? 0), 0)
}
