/**
 * @module
 * Result bytes are deleted 24 hours after a job ends (SPEC.md §8); the job row stays, and result
 * reads answer 410 `asset_expired`. Runs on the cron trigger; R2 lifecycle rules back it up.
 */
import type { Env } from '../env'

const SWEEP_BATCH = 100

export async function sweepExpiredResults(env: Pick<Env, 'DB' | 'BUCKET'>, now = new Date()): Promise<number> {
  const { results } = await env.DB.prepare(
    'SELECT id, result_key FROM jobs WHERE expires_at <= ? AND result_key IS NOT NULL AND result_deleted_at IS NULL LIMIT ?',
  )
    .bind(now.toISOString(), SWEEP_BATCH)
    .all<{ id: string; result_key: string }>()
  if (!results.length) return 0
  await env.BUCKET.delete(results.map((r) => r.result_key))
  await env.DB.batch(
    results.map((r) =>
      env.DB.prepare('UPDATE jobs SET result_deleted_at = ? WHERE id = ?').bind(now.toISOString(), r.id),
    ),
  )
  return results.length
}
