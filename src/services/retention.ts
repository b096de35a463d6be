/**
 * @module
 * Result bytes are deleted 24 hours after a job ends, and catalog images 24 hours after they are
 * made (SPEC.md §8); the rows stay, and reads answer 410 `asset_expired`. Runs on the cron
 * trigger (`sweepRetention`); R2 lifecycle rules back it up.
 */
import type { Env } from '../env'
import { settleAbandonedCatalogImages } from './catalog'

const SWEEP_BATCH = 100

/** Everything the cron trigger does, each part on its own so one failing does not stop the rest. */
export async function sweepRetention(env: Pick<Env, 'DB' | 'BUCKET'>, now = new Date()): Promise<void> {
  await Promise.allSettled([
    sweepExpiredResults(env, now),
    sweepExpiredCatalogImages(env, now),
    settleAbandonedCatalogImages(env, now.getTime()),
  ])
}

export async function sweepExpiredResults(env: Pick<Env, 'DB' | 'BUCKET'>, now = new Date()): Promise<number> {
  return sweepTable(env, 'jobs', now)
}

export async function sweepExpiredCatalogImages(env: Pick<Env, 'DB' | 'BUCKET'>, now = new Date()): Promise<number> {
  return sweepTable(env, 'catalog_images', now)
}

/** Deletes the bytes of rows past `expires_at` and marks them, a batch at a time. */
async function sweepTable(env: Pick<Env, 'DB' | 'BUCKET'>, table: 'jobs' | 'catalog_images', now: Date) {
  const { results } = await env.DB.prepare(
    `SELECT id, result_key FROM ${table} WHERE expires_at <= ? AND result_key IS NOT NULL AND result_deleted_at IS NULL LIMIT ?`,
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
