/**
 * @module
 * Batches (SPEC.md §4): up to 100 removal jobs from ready uploads, queued atomically: every job
 * and its credit hold is created in one D1 transaction, or nothing is. The batch completes when its
 * last job is terminal, and `image.batch.completed.v1` is emitted exactly once.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { iso } from '../lib/time'
import type { Batch } from '../schemas/batch'
import type { RemovalOptions } from '../schemas/removal'
import { type AcceptContext, type Accepted, acceptJobs, type JobDraft } from './accept'
import { publishEvent } from './events'
import { sha256Hex } from '../lib/crypto'
import { batchJobs, UNFINISHED_SQL } from './job-store'
import { toJob } from './job-view'
import { type ReadyUpload, readyUploads } from './uploads'
import type { batches } from '../db/schema'
import type { D1Row } from '../db/rows'

type BatchRow = D1Row<typeof batches>

export interface BatchInput {
  uploadIds: string[]
  options: RemovalOptions
}

/**
 * The batch's spec for the accept path (`accept.ts`): its uploads are checked ready before
 * anything is held, then one transaction inserts every job with its credit and the batch row, or
 * nothing. The answer is the batch (always 202: a batch is not waited for).
 */
export function acceptBatch(ctx: Omit<AcceptContext, 'waitSeconds'>, input: BatchInput): Promise<Accepted<Batch>> {
  const { env, auth } = ctx
  const uploads = input.uploadIds.map((id, i) => ({ id, field: `uploadIds.${i}` }))
  return acceptJobs<Batch, ReadyUpload[]>(
    { ...ctx, waitSeconds: null },
    {
      kind: 'remove_background',
      idempotency: { scope: 'batches', hash: () => sha256Hex(JSON.stringify(input)) },
      check: () => readyUploads(env.DB, auth.workspaceId, uploads),
      async draft(firstJobId, ready) {
        const batchId = crypto.randomUUID()
        const jobs = ready.map(
          (upload, i): JobDraft<'remove_background'> => ({
            id: i === 0 ? firstJobId : crypto.randomUUID(),
            kind: 'remove_background',
            options: input.options,
            sourceKey: upload.object_key,
            batchId,
            input: {
              source: { key: upload.object_key, size: upload.byte_size, sha256: upload.sha256 },
              options: input.options,
            },
          }),
        )
        // In the jobs' transaction: the batch row exists only if they do.
        const batchRow = env.DB.prepare(
          `INSERT INTO batches (id, workspace_id, status, total, options, created_at)
           SELECT ?, ?, 'processing', ?, ?, ? WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?)`,
        ).bind(batchId, auth.workspaceId, jobs.length, JSON.stringify(input.options), iso(), firstJobId)
        return { id: batchId, jobs, uploads, alongside: [batchRow] }
      },
      present: (id) => getBatch(env, auth.workspaceId, id),
      location: (id) => `/v1/batches/${id}`,
    },
  )
}

export async function getBatch(env: Env, workspaceId: string, id: string): Promise<Batch> {
  const batch = await env.DB.prepare('SELECT * FROM batches WHERE id = ? AND workspace_id = ?')
    .bind(id, workspaceId)
    .first<BatchRow>()
  if (!batch) throw new ApiError('batch_not_found', `No batch ${id} in this workspace`)
  const jobs = await batchJobs(env.DB, id)
  return {
    id: batch.id,
    status: batch.status,
    total: batch.total,
    jobs: await Promise.all(jobs.map((row) => toJob(row, env.RESULT_SIGNING_KEY))),
  }
}

/**
 * Completes the batch when none of its jobs is still queued or processing, then hands
 * `image.batch.completed.v1` to the webhooks once (retried by the caller until it succeeds).
 */
export async function completeBatchIfDone(env: Env, batchId: string, correlationId: string): Promise<void> {
  const now = iso()
  await env.DB.prepare(
    `UPDATE batches SET status = 'complete', completed_at = ?
     WHERE id = ? AND status = 'processing'
       AND NOT EXISTS (SELECT 1 FROM jobs WHERE batch_id = ? AND ${UNFINISHED_SQL})`,
  )
    .bind(now, batchId, batchId)
    .run()
  const batch = await env.DB.prepare(
    "SELECT workspace_id, total, completed_at FROM batches WHERE id = ? AND status = 'complete' AND completed_event_at IS NULL",
  )
    .bind(batchId)
    .first<{ workspace_id: string; total: number; completed_at: string }>()
  if (!batch) return
  const counts = await env.DB.prepare('SELECT status, COUNT(*) AS n FROM jobs WHERE batch_id = ? GROUP BY status')
    .bind(batchId)
    .all<{ status: string; n: number }>()
  const byStatus = Object.fromEntries(counts.results.map((r) => [r.status, r.n]))
  // The id is derived from the batch, so two last jobs racing here publish the same event, which
  // the outboxes store once.
  await publishEvent(env, {
    id: await eventIdFor(`batch.completed:${batchId}`),
    type: 'image.batch.completed.v1',
    occurredAt: batch.completed_at,
    workspaceId: batch.workspace_id,
    aggregateId: batchId,
    correlationId,
    data: {
      batchId,
      status: 'complete',
      total: batch.total,
      succeeded: byStatus.succeeded ?? 0,
      failed: byStatus.failed ?? 0,
      canceled: byStatus.canceled ?? 0,
    },
  })
  await env.DB.prepare('UPDATE batches SET completed_event_at = ? WHERE id = ?').bind(iso(), batchId).run()
}

/** A stable uuid-shaped id from a name (SHA-256 based, version nibble 8 like RFC 9562 custom ids). */
async function eventIdFor(name: string): Promise<string> {
  const hex = (await sha256Hex(name)).slice(0, 32).split('')
  hex[12] = '8'
  hex[16] = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)
  const h = hex.join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
