/**
 * @module
 * Job records in D1 and their public shape (SPEC.md §2 Job). The JobRun Durable Object owns a
 * running job's state and writes it through to D1; these functions create, read and list.
 */
import { type Job, type JobStage, type JobStatus, PUBLIC_JOB_KINDS } from '../schemas/job'
import { ApiError } from '../errors'
import { DAY_MS, iso } from '../lib/time'
import type { Env } from '../env'
import type { JobInputs, JobKindName } from '../jobs'
import { jobEvent } from '../lib/events'
import { HOLD_RESULT, holdStatements, quotaExhausted, settleStatements } from './credits'
import { publishEvent } from './events'
import { listPage } from '../lib/cursor'
import { signResultPath } from './result-url'

/** Result bytes are kept this long after a job ends (SPEC.md §8). */
export const RESULT_RETENTION_MS = DAY_MS

export interface JobRow {
  id: string
  workspace_id: string
  kind: JobKindName
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
  /** The job's options as the user gave them. */
  options: unknown
  /** The job's main source (`jobs.source_key`: what a project copies; a job's own `sources/<id>`). */
  sourceKey: string
  /** Every other source the job reads (a try-on's garment): with `sourceKey`, recorded in `job_sources`. */
  otherSourceKeys?: string[]
  /** The result's format (`png` for removals). */
  format: string
  batchId?: string
  projectId?: string
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

async function guardHolds(db: D1Database, guard: { sql: string; args: unknown[] }): Promise<boolean> {
  const row = await db
    .prepare(`SELECT (${guard.sql}) AS ok`)
    .bind(...guard.args)
    .first<{ ok: number }>()
  return row?.ok === 1
}

export interface InsertOptions {
  hold: boolean
  alongside?: D1PreparedStatement[]
  guard?: { sql: string; args: unknown[] }
}

export type TerminalStatus = 'succeeded' | 'failed' | 'canceled'

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
  const all: Record<string, unknown> = { status, completed_at: iso(), ...fields }
  const sets = Object.keys(all).map((k) => `${k} = ?`)
  return [
    ...settleStatements(db, jobId, status === 'succeeded' ? 'charge' : 'release'),
    db
      .prepare(`UPDATE jobs SET ${sets.join(', ')} WHERE id = ? AND status IN ('queued','processing')`)
      .bind(...Object.values(all), jobId),
  ]
}

/** SQL matching the public kinds: a project's refinements and exports are not jobs to users. */
const PUBLIC_KIND_SQL = `kind IN (${PUBLIC_JOB_KINDS.map((k) => `'${k}'`).join(', ')})`

export async function findJob(db: D1Database, workspaceId: string, id: string): Promise<JobRow> {
  const row = await db
    .prepare(`SELECT * FROM jobs WHERE id = ? AND workspace_id = ? AND ${PUBLIC_KIND_SQL}`)
    .bind(id, workspaceId)
    .first<JobRow>()
  if (!row) throw new ApiError('job_not_found', `No job ${id} in this workspace`)
  return row
}

export async function findJobById(db: D1Database, id: string): Promise<JobRow | null> {
  return db.prepare(`SELECT * FROM jobs WHERE id = ? AND ${PUBLIC_KIND_SQL}`).bind(id).first<JobRow>()
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
  if (!row) throw new ApiError('job_not_found', `No ${kind} ${where.id} in this project`)
  return row
}

/**
 * The stored result of a succeeded job (a removal's, an export's): 404 without one, 410
 * `asset_expired` once its bytes are past retention (the metadata stays).
 */
export async function readResult(
  env: Env,
  row: JobRow,
  what: string,
): Promise<{ body: ReadableStream; headers: Record<string, string> }> {
  if (row.status !== 'succeeded' || !row.result_key) {
    throw new ApiError('job_not_found', `${what} has no result (status ${row.status})`)
  }
  if (resultExpired(row)) {
    throw new ApiError('asset_expired', `The result of ${what} expired at ${row.expires_at}; its metadata remains`)
  }
  const object = await env.BUCKET.get(row.result_key)
  if (!object) throw new ApiError('asset_expired', `The result of ${what} is no longer stored`)
  return {
    body: object.body,
    headers: {
      'content-type': row.result_content_type ?? 'image/png',
      'content-length': String(object.size),
      'cache-control': 'private, max-age=600',
    },
  }
}

export function resultExpired(row: JobRow, now = Date.now()): boolean {
  return Boolean(row.result_deleted_at) || (row.expires_at !== null && Date.parse(row.expires_at) <= now)
}

export async function toJob(row: JobRow, resultSecret: string): Promise<Job> {
  const self = `/v1/jobs/${row.id}`
  let result: Job['result'] = null
  if (row.status === 'succeeded' && row.result_key && !resultExpired(row)) {
    const signed = await signResultPath(resultSecret, `${self}/result`)
    result = { url: signed.path, contentType: row.result_content_type ?? 'image/png', expiresAt: signed.expiresAt }
  }
  return {
    id: row.id,
    kind: row.kind as Job['kind'],
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
  kind?: Job['kind']
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

/** What the runner of a new job is started with. */
export interface JobStart<K extends JobKindName = JobKindName> {
  jobId: string
  workspaceId: string
  correlationId: string
  kind: K
  input: JobInputs[K]
  batchId?: string
}

/**
 * Accepts new jobs: inserts them (with their holds when the kind holds credits) and starts each
 * one's runner; when `guard` stops them, throws `refused()` and starts none. A job whose runner cannot be reached ends failed at once; returns how many did.
 */
export async function acceptJobs(
  env: Env,
  jobs: { row: NewJob; start: JobStart }[],
  opts: InsertOptions & { refused?: () => ApiError | Promise<ApiError> },
): Promise<number> {
  const inserted = await insertJobs(
    env.DB,
    jobs.map((j) => j.row),
    opts,
  )
  if (inserted < jobs.length) throw (await opts.refused?.()) ?? new Error('Expected every job to be inserted')
  const started = await Promise.allSettled(
    jobs.map(({ start }) => env.JOB_RUN.get(env.JOB_RUN.idFromName(start.jobId)).start(start)),
  )
  const unstarted = jobs.filter((_, i) => started[i].status === 'rejected').map(({ start }) => start)
  if (unstarted.length) {
    await failUnstartedJobs(
      env,
      unstarted.map((s) => ({
        id: s.jobId,
        workspaceId: s.workspaceId,
        correlationId: s.correlationId,
        batchId: s.batchId,
        public: (PUBLIC_JOB_KINDS as readonly string[]).includes(s.kind),
      })),
    )
  }
  return unstarted.length
}

/** A job that was accepted but whose runner could not be reached. */
export interface UnstartedJob {
  id: string
  workspaceId: string
  correlationId: string
  batchId?: string
  /** Internal kinds (a project's refinements, exports) send no job events; their request fails instead. */
  public?: boolean
}

/**
 * Jobs whose runner could not be reached end at once, with their holds released, and a public
 * job's terminal event goes out like any other job's.
 */
export async function failUnstartedJobs(env: Env, jobs: UnstartedJob[]): Promise<void> {
  const error = { code: 'processor_unavailable', message: 'The job could not be scheduled' }
  await env.DB.batch(
    jobs.flatMap((job) =>
      finishJobStatements(env.DB, job.id, 'failed', { error_code: error.code, error_message: error.message }),
    ),
  )
  await Promise.all(
    jobs
      .filter((job) => job.public !== false)
      .map((job) =>
        publishEvent(
          env,
          jobEvent('image.job.failed.v1', { ...job, jobId: job.id, status: 'failed', stage: 'queued' }, { error }),
        ),
      ),
  )
}

/**
 * The answer to a job's creation: 200 with the job when it ends within `waitSeconds`
 * (`Prefer: wait`), else 202 with the job as it stands and its `Location`.
 */
export async function jobResponse(
  env: Env,
  workspaceId: string,
  jobId: string,
  waitSeconds: number | null,
): Promise<{ status: number; body: string; location: string }> {
  const stub = env.JOB_RUN.get(env.JOB_RUN.idFromName(jobId))
  const finished = waitSeconds ? await stub.waitForTerminal(waitSeconds * 1000) : false
  const view = await toJob(await findJob(env.DB, workspaceId, jobId), env.RESULT_SIGNING_KEY)
  return { status: finished ? 200 : 202, body: JSON.stringify(view), location: view.links.self }
}
