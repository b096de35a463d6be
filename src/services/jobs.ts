/**
 * @module
 * Running jobs (SPEC.md §2 Job, §3): starting their JobRun objects, the bounded wait, cancel, the
 * event stream and the result bytes. The rows are `job-store.ts`'s, their API shape `job-view.ts`'s.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import type { JobInputs, JobKindName } from '../jobs'
import { jobEvent } from '../lib/events'
import { DAY_MS } from '../lib/time'
import { type Job, PUBLIC_JOB_KINDS } from '../schemas/job'
import { proxyEventStream } from './event-stream'
import { publishEvent } from './events'
import { findJob, finishJobStatements, type JobRow } from './job-store'
import { toJob } from './job-view'
import { serveStored, type StoredResponse } from './stored-bytes'

/** Result bytes are kept this long after a job ends (SPEC.md §8). */
export const RESULT_RETENTION_MS = DAY_MS
/** How long DELETE waits for an aborted inference call to wind down before answering. */
const CANCEL_SETTLE_MS = 2_000

/** What the runner of a new job is started with. */
export interface JobStart<K extends JobKindName = JobKindName> {
  jobId: string
  workspaceId: string
  correlationId: string
  /** The accepting request's W3C trace id, kept with the job for its logs and inference calls. */
  traceId?: string
  kind: K
  input: JobInputs[K]
  batchId?: string
  /**
   * The server the accept found ready, and when: readiness is asked once per job, so the runner's
   * first attempt goes there when it starts within `READY_HINT_MS`; later attempts ask again.
   */
  ready?: ReadyHint
}

export interface ReadyHint {
  url: string
  modelVersion?: string
  /** When the accept asked (ms since the epoch). */
  at: number
}

/** How long the accept's readiness answer stands for the first attempt (a job that waited for a slot asks again). */
export const READY_HINT_MS = 5_000

const jobRun = (env: Env, jobId: string) => env.JOB_RUN.get(env.JOB_RUN.idFromName(jobId))

/**
 * Starts each inserted job's runner. A job whose runner cannot be reached ends failed at once
 * (its hold released); returns how many did.
 */
export async function startJobs(env: Env, starts: JobStart[]): Promise<number> {
  const started = await Promise.allSettled(starts.map((start) => jobRun(env, start.jobId).start(start)))
  const unstarted = starts.filter((_, i) => started[i].status === 'rejected')
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
 * The bounded wait (SPEC.md §4 `Prefer: wait`): true once the job is terminal, false when `ms`
 * passed first (no wait at all for 0).
 */
export async function waitForJob(env: Env, jobId: string, ms: number): Promise<boolean> {
  return ms > 0 ? jobRun(env, jobId).waitForTerminal(ms) : false
}

/**
 * Cancels a job of the workspace (SPEC.md §3): at once when nothing is in flight, else its
 * inference call is aborted and given a moment to wind down. Answers the job as it then stands.
 */
export async function cancelJob(env: Env, workspaceId: string, id: string): Promise<Job> {
  await findJob(env.DB, workspaceId, id)
  const status = await jobRun(env, id).cancel()
  if (status === 'processing') await waitForJob(env, id, CANCEL_SETTLE_MS)
  return toJob(await findJob(env.DB, workspaceId, id), env.RESULT_SIGNING_KEY)
}

/** A job's event stream (SPEC.md §6), from after `lastEventId`. */
export async function jobEvents(env: Env, workspaceId: string, id: string, lastEventId?: string): Promise<Response> {
  await findJob(env.DB, workspaceId, id)
  return proxyEventStream(jobRun(env, id), 'https://job-run/events', lastEventId)
}

/**
 * The stored result of a succeeded job (a removal's, an export's): 404 without one, 410
 * `asset_expired` once its bytes are past retention (the metadata stays).
 */
export async function readResult(env: Env, row: JobRow, what: string): Promise<StoredResponse> {
  if (row.status !== 'succeeded' || !row.result_key) {
    const code = row.kind === 'export' ? 'export_not_found' : 'job_not_found'
    throw new ApiError(code, `${what} has no result (status ${row.status})`)
  }
  return serveStored(env.BUCKET, row.result_key, row, `the result of ${what}`, {
    contentType: row.result_content_type ?? 'image/png',
    cacheControl: 'private, max-age=600',
  })
}
