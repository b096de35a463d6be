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
import type { AuthContext } from './auth'
import { publishEvent } from './events'
import { claimIdempotencyKey, type StoredResponse } from './idempotency'
import { assertProcessorAvailable, InferenceClient } from './inference'
import { sha256Hex } from '../lib/crypto'
import { JOB_KINDS } from '../jobs'
import { acceptJobs, toJob, type JobRow } from './jobs'
import { type UploadRow, uploadsStillReady } from './uploads'

type BatchRow = {
  id: string
  workspace_id: string
  status: 'processing' | 'complete'
  total: number
  created_at: string
}

export interface BatchInput {
  uploadIds: string[]
  options: RemovalOptions
}

export async function acceptBatch(
  ctx: { env: Env; auth: AuthContext; requestId: string; idempotencyKey: string },
  input: BatchInput,
): Promise<StoredResponse> {
  const { env, auth } = ctx
  const hash = await sha256Hex(JSON.stringify(input))
  const claim = await claimIdempotencyKey(env.DB, auth.workspaceId, 'batches', ctx.idempotencyKey, hash)
  if (claim.kind === 'replay') return claim.response
  try {
    const batch = await createBatch(env, auth.workspaceId, ctx.requestId, input)
    const response = { status: 202, body: JSON.stringify(batch), location: `/v1/batches/${batch.id}` }
    await claim.complete(response)
    return response
  } catch (err) {
    await claim.release()
    throw err
  }
}

async function readyUploads(db: D1Database, workspaceId: string, ids: string[]): Promise<UploadRow[]> {
  const { results } = await db
    .prepare(`SELECT * FROM uploads WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))`)
    .bind(workspaceId, JSON.stringify(ids))
    .all<UploadRow>()
  const byId = new Map(results.map((u) => [u.id, u]))
  return ids.map((id, i) => {
    const upload = byId.get(id)
    if (!upload) throw new ApiError('invalid_input', `No upload ${id} in this workspace`, { field: `uploadIds.${i}` })
    if (upload.status !== 'ready' || !upload.sha256 || !upload.byte_size) {
      throw new ApiError('invalid_input', `Upload ${id} is not ready; complete it first`, { field: `uploadIds.${i}` })
    }
    return upload
  })
}

async function createBatch(env: Env, workspaceId: string, correlationId: string, input: BatchInput): Promise<Batch> {
  const uploads = await readyUploads(env.DB, workspaceId, input.uploadIds)
  await assertProcessorAvailable(InferenceClient.fromEnv(env))
  const batchId = crypto.randomUUID()
  const now = iso()
  const jobIds = uploads.map(() => crypto.randomUUID())
  const jobs = uploads.map((upload, i) => ({
    row: {
      id: jobIds[i],
      workspaceId,
      kind: 'remove_background' as const,
      options: input.options,
      sourceKey: upload.object_key,
      format: 'png',
      batchId,
    },
    start: {
      jobId: jobIds[i],
      workspaceId,
      correlationId,
      batchId,
      kind: 'remove_background' as const,
      input: {
        source: { key: upload.object_key, size: upload.byte_size!, sha256: upload.sha256! },
        options: input.options,
      },
    },
  }))
  // One transaction: every job with its credit, and the batch row, or nothing.
  const batchRow = env.DB.prepare(
    `INSERT INTO batches (id, workspace_id, status, total, options, created_at)
     SELECT ?, ?, 'processing', ?, ?, ? WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?)`,
  ).bind(batchId, workspaceId, uploads.length, JSON.stringify(input.options), now, jobIds[0])
  await acceptJobs(env, jobs, {
    hold: JOB_KINDS.remove_background.holdsCredit,
    alongside: [batchRow],
    // The retention sweep may have removed a day-old upload since `readyUploads`: then nothing is
    // queued or held, and reading them again throws the answer naming the first one gone, as a
    // request naming it now would get.
    guard: uploadsStillReady(workspaceId, input.uploadIds),
    refused: async () => {
      await readyUploads(env.DB, workspaceId, input.uploadIds)
      return new ApiError('invalid_input', 'An upload in uploadIds no longer exists in this workspace', {
        field: 'uploadIds',
      })
    },
  })
  return getBatch(env, workspaceId, batchId)
}

export async function getBatch(env: Env, workspaceId: string, id: string): Promise<Batch> {
  const batch = await env.DB.prepare('SELECT * FROM batches WHERE id = ? AND workspace_id = ?')
    .bind(id, workspaceId)
    .first<BatchRow>()
  if (!batch) throw new ApiError('job_not_found', `No batch ${id} in this workspace`)
  const { results } = await env.DB.prepare('SELECT * FROM jobs WHERE batch_id = ? ORDER BY created_at, rowid')
    .bind(id)
    .all<JobRow>()
  return {
    id: batch.id,
    status: batch.status,
    total: batch.total,
    jobs: await Promise.all(results.map((row) => toJob(row, env.RESULT_SIGNING_KEY))),
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
       AND NOT EXISTS (SELECT 1 FROM jobs WHERE batch_id = ? AND status IN ('queued', 'processing'))`,
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
