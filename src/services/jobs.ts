/**
 * @module
 * Job records in D1 and their public shape (SPEC.md §2 Job). The JobRun Durable Object owns a
 * running job's state and writes it through to D1; these functions create, read and list.
 */
import type { Job, JobStage, JobStatus } from '../schemas/job'
import { ApiError } from '../errors'
import { DAY_MS, iso } from '../lib/time'
import { holdStatements, quotaExhausted, settleStatements } from './credits'
import { signResultPath } from './result-url'

/** Result bytes are kept this long after a job ends (SPEC.md §8). */
export const RESULT_RETENTION_MS = DAY_MS

export interface JobRow {
  id: string
  workspace_id: string
  kind: 'remove_background' | 'virtual_try_on'
  status: JobStatus
  stage: JobStage
  format: string
  options: string
  source_key: string
  result_key: string | null
  result_content_type: string | null
  model_version: string | null
  error_code: string | null
  error_message: string | null
  warnings: string | null
  batch_id: string | null
  project_id: string | null
  created_at: string
  started_at: string | null
  completed_at: string | null
  expires_at: string | null
  result_deleted_at: string | null
}

export interface NewJob {
  id: string
  workspaceId: string
  kind: JobRow['kind']
  options: unknown
  sourceKey: string
  batchId?: string
}

/**
 * Inserts a queued job together with its credit hold, atomically: if no credit is left, neither
 * the hold nor the job exists afterwards and 402 is thrown.
 */
export async function insertJobWithHold(db: D1Database, job: NewJob): Promise<void> {
  const [take] = await db.batch([
    ...holdStatements(db, job.workspaceId, job.id),
    db
      .prepare(
        `INSERT INTO jobs (id, workspace_id, kind, status, stage, format, options, source_key, batch_id, created_at)
         SELECT ?, ?, ?, 'queued', 'queued', 'png', ?, ?, ?, ?
         WHERE EXISTS (SELECT 1 FROM credit_holds WHERE job_id = ?)`,
      )
      .bind(
        job.id,
        job.workspaceId,
        job.kind,
        JSON.stringify(job.options),
        job.sourceKey,
        job.batchId ?? null,
        iso(),
        job.id,
      ),
  ])
  if (take.meta.changes !== 1) throw quotaExhausted()
}

/** Inserts a queued job that holds no credit (anonymous jobs spend the daily allowance instead). */
export async function insertJob(db: D1Database, job: NewJob): Promise<void> {
  await db
    .prepare(
      `INSERT INTO jobs (id, workspace_id, kind, status, stage, format, options, source_key, batch_id, created_at)
       VALUES (?, ?, ?, 'queued', 'queued', 'png', ?, ?, ?, ?)`,
    )
    .bind(job.id, job.workspaceId, job.kind, JSON.stringify(job.options), job.sourceKey, job.batchId ?? null, iso())
    .run()
}

export async function findJob(db: D1Database, workspaceId: string, id: string): Promise<JobRow> {
  const row = await db
    .prepare('SELECT * FROM jobs WHERE id = ? AND workspace_id = ?')
    .bind(id, workspaceId)
    .first<JobRow>()
  if (!row) throw new ApiError('job_not_found', `No job ${id} in this workspace`)
  return row
}

export async function findJobById(db: D1Database, id: string): Promise<JobRow | null> {
  return db.prepare('SELECT * FROM jobs WHERE id = ?').bind(id).first<JobRow>()
}

export function resultExpired(row: JobRow, now = Date.now()): boolean {
  return Boolean(row.result_deleted_at) || (row.expires_at !== null && Date.parse(row.expires_at) <= now)
}

export async function toJob(row: JobRow, resultSecret: string): Promise<Job> {
  const self = `/v1/jobs/${row.id}`
  let result: Job['result'] = null
  if (row.status === 'succeeded' && row.result_key && !resultExpired(row)) {
    const signed = await signResultPath(resultSecret, row.id)
    result = { url: signed.path, contentType: row.result_content_type ?? 'image/png', expiresAt: signed.expiresAt }
  }
  return {
    id: row.id,
    kind: row.kind,
    ...(row.project_id ? { projectId: row.project_id } : {}),
    ...(row.batch_id ? { batchId: row.batch_id } : {}),
    status: row.status,
    stage: row.stage,
    format: (row.format ?? 'png') as Job['format'],
    modelVersion: row.model_version,
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    expiresAt: row.expires_at,
    result,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    warnings: row.warnings ? (JSON.parse(row.warnings) as Job['warnings']) : [],
    links: { self, events: `${self}/events`, result: `${self}/result`, cancel: self },
  }
}

export interface JobQuery {
  limit?: number
  cursor?: string
  status?: JobStatus
  kind?: JobRow['kind']
  batchId?: string
  projectId?: string
}

/** Newest first; the cursor is the (createdAt, id) of the last job returned. */
export async function listJobs(db: D1Database, workspaceId: string, q: JobQuery) {
  const limit = q.limit ?? 20
  const where = ['workspace_id = ?']
  const args: unknown[] = [workspaceId]
  for (const [column, value] of [
    ['status', q.status],
    ['kind', q.kind],
    ['batch_id', q.batchId],
    ['project_id', q.projectId],
  ] as const) {
    if (value) {
      where.push(`${column} = ?`)
      args.push(value)
    }
  }
  if (q.cursor) {
    const [createdAt, id] = decodeCursor(q.cursor)
    where.push('(created_at < ? OR (created_at = ? AND id < ?))')
    args.push(createdAt, createdAt, id)
  }
  const { results } = await db
    .prepare(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`)
    .bind(...args, limit + 1)
    .all<JobRow>()
  const page = results.slice(0, limit)
  const last = page.at(-1)
  return { rows: page, nextCursor: results.length > limit && last ? encodeCursor(last) : null }
}

function encodeCursor(row: JobRow): string {
  return btoa(`${row.created_at}|${row.id}`).replaceAll('=', '')
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const [createdAt, id] = atob(cursor).split('|')
    if (createdAt && id) return [createdAt, id]
  } catch {
    // fall through
  }
  throw new ApiError('invalid_input', 'Expected a cursor returned by a previous page', { field: 'cursor' })
}

/** Jobs whose runner could not be reached end at once, with their holds released. */
export async function failUnstartedJobs(db: D1Database, jobIds: string[]) {
  await db.batch(
    jobIds.flatMap((id) => [
      ...settleStatements(db, id, 'release'),
      db
        .prepare(
          "UPDATE jobs SET status = 'failed', error_code = 'processor_unavailable', error_message = 'The job could not be scheduled', completed_at = ? WHERE id = ? AND status = 'queued'",
        )
        .bind(iso(), id),
    ]),
  )
}
