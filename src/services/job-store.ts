/**
 * @module
 * Job rows in D1 (SPEC.md §2 Job): the SQL that creates, ends, reads and lists them. The JobRun
 * Durable Object owns a running job's state and writes it through with {@link unfinishedJobUpdate},
 * the same terminal guard as {@link finishJobStatements}.
 */
import { JOB_STATUSES, TERMINAL_STATUSES, type TerminalStatus } from '../contract/stages'
import type { jobs } from '../db/schema'
import type { D1Row } from '../db/rows'
import { ApiError } from '../errors'
import { listPage } from '../lib/cursor'
import { iso } from '../lib/time'
import { type JobStatus, PUBLIC_JOB_KINDS } from '../schemas/job'
import { MISSING_CREDENTIAL } from './auth'
import { HOLD_RESULT, holdStatements, quotaExhausted, settleStatements } from './credits'
import { isDeviceWorkspace } from './device'

export type JobRow = D1Row<typeof jobs>
type JobInsert = typeof jobs.$inferInsert

export interface NewJob extends Pick<JobInsert, 'id' | 'workspaceId' | 'kind' | 'sourceKey' | 'batchId' | 'projectId'> {
  /** The job's options as the user gave them (with what the accept chose, like a seed). */
  options: unknown
  /** Every other source the job reads (a try-on's garment): with `sourceKey`, recorded in `job_sources`. */
  otherSourceKeys?: string[]
  /** The result's format (`png` unless the kind says otherwise, like an export). */
  format: string
}

/**
 * The terminal guard: a job that ended (succeeded, failed, canceled) is never written again, so
 * a stale run cannot overwrite a cancel and a hold is settled once (DESIGN.md §3).
 */
export const unfinishedSql = (column = 'status') =>
  `${column} IN (${JOB_STATUSES.filter((s) => !(TERMINAL_STATUSES as readonly string[]).includes(s))
    .map((s) => `'${s}'`)
    .join(', ')})`
export const UNFINISHED_SQL = unfinishedSql()

/** `UPDATE jobs SET <fields> WHERE id = ?` while the job is unfinished: the one way a job row changes. */
export function unfinishedJobUpdate(
  db: D1Database,
  jobId: string,
  fields: Record<string, unknown>,
): D1PreparedStatement {
  const sets = Object.keys(fields).map((k) => `${k} = ?`)
  return db
    .prepare(`UPDATE jobs SET ${sets.join(', ')} WHERE id = ? AND ${UNFINISHED_SQL}`)
    .bind(...Object.values(fields), jobId)
}

/** A condition a job's insert (and its hold) must meet, and the answer when it stops them. */
export interface InsertGuard {
  sql: string
  args: unknown[]
}

export interface InsertOptions {
  hold: boolean
  alongside?: D1PreparedStatement[]
  guard?: InsertGuard
}

/**
 * Inserts queued jobs, with one credit hold each when `hold`, atomically: if the credits do not
 * cover them all, no hold and no job exists afterwards and 402 is thrown. `alongside` are
 * statements of the same transaction that must happen only if the jobs do (e.g. the batch row):
 * guard them with `WHERE EXISTS (SELECT 1 FROM jobs WHERE id = <a job's id>)`. `guard` is a
 * condition each job's insert, and the hold, must meet (e.g. a project's refinement cap, an upload
 * source still there); a job it stops is not inserted. Every source a job reads goes into
 * `job_sources` with it, which the retention sweep asks before removing an upload. Returns how
 * many jobs were.
 */
export async function insertJobs(
  db: D1Database,
  jobs: NewJob[],
  { hold, alongside = [], guard }: InsertOptions,
): Promise<number> {
  const now = iso()
  const holds = hold
    ? holdStatements(
        db,
        jobs[0].workspaceId,
        jobs.map((j) => j.id),
        guard,
      )
    : []
  const inserts = jobs.map((job) =>
    db
      .prepare(
        `INSERT INTO jobs (id, workspace_id, kind, status, stage, format, options, source_key, batch_id, project_id, created_at)
         SELECT ?, ?, ?, 'queued', 'queued', ?, ?, ?, ?, ?, ?
         WHERE (? OR EXISTS (SELECT 1 FROM credit_holds WHERE job_id = ?)) AND ${guard?.sql ?? '1'}`,
      )
      .bind(
        job.id,
        job.workspaceId,
        job.kind,
        job.format,
        JSON.stringify(job.options),
        job.sourceKey,
        job.batchId ?? null,
        job.projectId ?? null,
        now,
        hold ? 0 : 1,
        job.id,
        ...(guard?.args ?? []),
      ),
  )
  // Only beside a job that was inserted, like `alongside`.
  const sources = jobs.map((job) =>
    db
      .prepare(
        `INSERT INTO job_sources (job_id, source_key) SELECT ?1, value FROM json_each(?2)
         WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1)`,
      )
      .bind(job.id, JSON.stringify([...new Set([job.sourceKey, ...(job.otherSourceKeys ?? [])])])),
  )
  const results = await db.batch([...holds, ...inserts, ...sources, ...alongside])
  if (hold && results[HOLD_RESULT].meta.changes !== 1) {
    // The hold is gated on the guard too (no hold may outlive a job that was not inserted): tell
    // a guard that stopped the jobs from credits that ran out. Rows a guard asks for do not come back.
    if (guard && !(await guardHolds(db, guard))) return 0
    throw quotaExhausted()
  }
  return results.slice(holds.length, holds.length + inserts.length).reduce((n, r) => n + r.meta.changes, 0)
}

async function guardHolds(db: D1Database, guard: InsertGuard): Promise<boolean> {
  const row = await db
    .prepare(`SELECT (${guard.sql}) AS ok`)
    .bind(...guard.args)
    .first<{ ok: number }>()
  return row?.ok === 1
}

export type { TerminalStatus }

/**
 * The one way a job ends: its hold charged (success) or released (anything else) and its row made
 * terminal, in one transaction. A job that is already terminal is left as it is, and its hold
 * (settled with it) is not touched twice.
 */
export function finishJobStatements(
  db: D1Database,
  jobId: string,
  status: TerminalStatus,
  fields: Record<string, unknown>,
): D1PreparedStatement[] {
  return [
    ...settleStatements(db, jobId, status === 'succeeded' ? 'charge' : 'release'),
    unfinishedJobUpdate(db, jobId, { status, completed_at: iso(), ...fields }),
  ]
}

/** SQL matching the public kinds: a project's refinements and exports are not jobs to users. */
const PUBLIC_KIND_SQL = `kind IN (${PUBLIC_JOB_KINDS.map((k) => `'${k}'`).join(', ')})`

export async function findJob(db: D1Database, workspaceId: string, id: string): Promise<JobRow> {
  const row = await db
    .prepare(`SELECT * FROM jobs WHERE id = ? AND workspace_id = ? AND ${PUBLIC_KIND_SQL}`)
    .bind(id, workspaceId)
    .first<JobRow>()
  if (!row) throw jobNotFound(workspaceId, id)
  return row
}

/**
 * A job missing from the caller's workspace. A caller without a credential acts as its device
 * (SPEC.md §5.4), which holds only the jobs it made: any other job may well be a workspace's, so
 * what the caller lacks is a credential (401), and "no job in this workspace" would mislead it.
 */
function jobNotFound(workspaceId: string, id: string): ApiError {
  if (isDeviceWorkspace(workspaceId)) {
    return new ApiError('invalid_api_key', `This device made no job ${id}. ${MISSING_CREDENTIAL}`)
  }
  return new ApiError('job_not_found', `No job ${id} in this workspace`)
}

export async function findJobById(db: D1Database, id: string): Promise<JobRow | null> {
  return db.prepare(`SELECT * FROM jobs WHERE id = ? AND ${PUBLIC_KIND_SQL}`).bind(id).first<JobRow>()
}

export async function jobExists(db: D1Database, id: string): Promise<boolean> {
  return (await db.prepare('SELECT 1 FROM jobs WHERE id = ?').bind(id).first()) !== null
}

/** A job of `kind` by its id alone (an internal job's report, once it ended), or null. */
export async function findJobOfKind(db: D1Database, kind: JobRow['kind'], id: string): Promise<JobRow | null> {
  return db.prepare('SELECT * FROM jobs WHERE id = ? AND kind = ?').bind(id, kind).first<JobRow>()
}

/** A project's internal job (a refinement or an export) of the workspace, or 404 naming it. */
export async function findProjectJob(
  db: D1Database,
  kind: 'refinement' | 'export',
  where: { workspaceId?: string; projectId: string; id: string },
): Promise<JobRow> {
  const row = await db
    .prepare(
      `SELECT * FROM jobs WHERE id = ? AND project_id = ? AND kind = ? ${where.workspaceId ? 'AND workspace_id = ?' : ''}`,
    )
    .bind(where.id, where.projectId, kind, ...(where.workspaceId ? [where.workspaceId] : []))
    .first<JobRow>()
  if (!row) throw new ApiError(`${kind}_not_found`, `No ${kind} ${where.id} in this project`)
  return row
}

/** A batch's jobs in the order they were queued. */
export async function batchJobs(db: D1Database, batchId: string): Promise<JobRow[]> {
  const { results } = await db
    .prepare('SELECT * FROM jobs WHERE batch_id = ? ORDER BY created_at, rowid')
    .bind(batchId)
    .all<JobRow>()
  return results
}

export interface JobQuery {
  limit?: number
  cursor?: string
  status?: JobStatus
  kind?: (typeof PUBLIC_JOB_KINDS)[number]
  batchId?: string
  projectId?: string
}

/**
 * Newest first; the cursor is the (createdAt, id) of the last job returned. `projectId` finds the
 * job the project was made from (its `sourceJobId`): a project's own work (refinements, exports)
 * is not a job to users, so no public job carries a project id of its own.
 */
export async function listJobs(db: D1Database, workspaceId: string, q: JobQuery) {
  const where = ['workspace_id = ?', PUBLIC_KIND_SQL]
  const args: unknown[] = [workspaceId]
  for (const [column, value] of [
    ['status', q.status],
    ['kind', q.kind],
    ['batch_id', q.batchId],
  ] as const) {
    if (value) {
      where.push(`${column} = ?`)
      args.push(value)
    }
  }
  if (q.projectId) {
    where.push('id IN (SELECT source_job_id FROM projects WHERE id = ? AND workspace_id = ?)')
    args.push(q.projectId, workspaceId)
  }
  return listPage<JobRow>(db, 'jobs', { where, args }, q)
}
