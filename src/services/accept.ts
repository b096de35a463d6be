/**
 * @module
 * The one accept path of every job-creating request (SPEC.md §4 Processing; DESIGN.md §3):
 * idempotency claim → checks → sources → the job rows with their credit holds in one D1
 * transaction → the runners started → the bounded wait, answered as `{ job, finished }`. Each
 * kind is a {@link JobSpec}: removals, try-ons, batches, a project's refinements and exports.
 * Catalog images are not: they are made while the client waits, with no job row and no runner
 * (`catalog.ts`), and share only {@link acceptChecks}.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { JOB_KINDS, type JobInputs, type JobKindName } from '../jobs'
import type { Job } from '../schemas/job'
import { takeAllowance } from './anonymous'
import type { AuthContext } from './auth'
import { getUsage, quotaExhausted } from './credits'
import { createOnce, idempotent, requireIdempotencyKey } from './idempotency'
import { assertProcessorAvailable, type InferenceClient, type Readiness } from './inference'
import { withStaging } from '../lib/storage'
import { jobSourcePrefix, storesBytes } from './job-sources'
import { findJob, type InsertGuard, insertJobs, jobExists, type NewJob } from './job-store'
import { toJob } from './job-view'
import { type JobStart, type ReadyHint, startJobs, waitForJob } from './jobs'
import { type UploadRef, uploadsStillReady } from './uploads'

/** The request a job is accepted for. */
export interface AcceptContext {
  env: Env
  /** The request's inference client (services/context.ts): whether any server can take the job. */
  inference: InferenceClient
  auth: AuthContext
  requestId: string
  /** The request's W3C trace id: the job's inference calls carry it on (src/middleware/trace.ts). */
  traceId?: string
  /** Required by the public job routes; optional on a project's (without one every request creates). */
  idempotencyKey?: string
  /** How long to wait for the job to end before answering (`Prefer: wait`); null: not at all. */
  waitSeconds: number | null
  /**
   * The id the (first) job gets when it is created, chosen before the accept (`acceptStaged`)
   * because its sources are stored under `jobSourcePrefix(jobId)` while the request is read.
   */
  jobId?: string
}

/** What the accept path answers; the route maps it to a status. */
export interface Accepted<T> {
  job: T
  /** It ended within the bounded wait: 200 (an export's 201) rather than 202. */
  finished: boolean
  location: string
}

/** One job to insert and start: its row and its runner's input are built from these fields alone. */
export interface JobDraft<K extends JobKindName = JobKindName> {
  id: string
  kind: K
  /** What the row keeps as the job's options (as given, with what the accept chose, like a seed). */
  options: unknown
  /** What the runner is started with. */
  input: JobInputs[K]
  /** The main source (`jobs.source_key`); with `otherSourceKeys`, what `job_sources` records. */
  sourceKey: string
  otherSourceKeys?: string[]
  /** The result's format; `png` unless the kind makes another (an export). */
  format?: string
  batchId?: string
  projectId?: string
}

/** The jobs a spec drafted, and what their insert must meet. */
export interface Drafted {
  /** What the answer is about, when it is not the first job (a batch). */
  id?: string
  jobs: JobDraft[]
  /** Uploads the jobs read: the retention sweep may remove one meanwhile, and then none is inserted. */
  uploads?: UploadRef[]
  /** Another condition of the insert (a project's refinement cap), and the problem when it refuses. */
  guard?: InsertGuard & { refused: () => ApiError }
  /** Statements that happen only if the jobs are inserted (a batch's row; see `insertJobs`). */
  alongside?: D1PreparedStatement[]
}

/**
 * A kind of job-creating request. `check` runs before any credit is held or byte stored (its
 * result goes to `draft`); `draft` names the jobs, the first with `jobId`, and may store their
 * sources under `jobSourcePrefix(jobId)`: a spec that does is accepted through `acceptStaged`,
 * which deletes them if the request is refused.
 */
export interface JobSpec<T, C = undefined> {
  kind: JobKindName
  /**
   * `hash`: a replay answers the first answer as it was (the public job routes, key required).
   * `request`: only the id is kept, and a replay reads it afresh and waits again (a project's).
   */
  idempotency: { scope: string; hash: () => Promise<string> } | { scope: string; request: unknown }
  check?: () => Promise<C>
  draft: (jobId: string, checked: C) => Promise<Drafted>
  present: (id: string) => Promise<T>
  location: (id: string) => string
  /** What the 503 calls it when its runner cannot be reached; without it (a batch) such jobs just end failed. */
  unscheduled?: string
}

/** Reads a request's input, storing its files under `jobSourcePrefix(jobId)` as they arrive. */
export type StagedRead<I> = (jobId: string) => Promise<I>

/**
 * Accepts a job whose request stores its sources first: `read` (a streamed multipart body, or a
 * JSON one) is given the job's id, chosen now, and the bytes it and the draft store (its files,
 * a fetched `sourceUrl`) go under `jobSourcePrefix(jobId)`. They stay only with the job they are
 * for: a request refused by anything (a bad part, no credits, a conflict) or failed before the
 * row exists leaves none stored, nor does a replay, whose job has its own.
 */
export async function acceptStaged<I extends object, T extends { id: string }>(
  ctx: AcceptContext,
  read: StagedRead<I>,
  accept: (ctx: AcceptContext, input: I) => Promise<Accepted<T>>,
): Promise<Accepted<T>> {
  const jobId = crypto.randomUUID()
  let input: I | undefined
  const work = async () => {
    input = await read(jobId)
    return accept({ ...ctx, jobId }, input)
  }
  return withStaging(ctx.env.BUCKET, jobSourcePrefix(jobId), work, async (accepted) => {
    // Sources that are all uploads stored nothing here (a refusal then costs no D1 or R2 call);
    // a read that failed was a streamed body's.
    if (input && !storesBytes(input)) return true
    return accepted ? accepted.job.id === jobId : jobExists(ctx.env.DB, jobId)
  })
}

export async function acceptJobs<T, C = undefined>(ctx: AcceptContext, spec: JobSpec<T, C>): Promise<Accepted<T>> {
  const { env, auth } = ctx
  const { idempotency } = spec
  if ('request' in idempotency) {
    const id = await createOnce({
      db: env.DB,
      workspaceId: auth.workspaceId,
      scope: idempotency.scope,
      key: ctx.idempotencyKey,
      request: idempotency.request,
      create: () => insertAndStart(ctx, spec),
      idOf: (created) => created,
      find: async (stored) => stored,
    })
    return answer(ctx, spec, id)
  }
  const key = requireIdempotencyKey(ctx.idempotencyKey)
  let fresh: Accepted<T> | undefined
  const stored = await idempotent(
    env.DB,
    auth.workspaceId,
    idempotency.scope,
    key,
    await idempotency.hash(),
    async () => {
      fresh = await answer(ctx, spec, await insertAndStart(ctx, spec))
      return { status: fresh.finished ? 200 : 202, body: JSON.stringify(fresh.job), location: fresh.location }
    },
  )
  // A replay: the first answer, as the idempotency record keeps it.
  return (
    fresh ?? { job: JSON.parse(stored.body) as T, finished: stored.status === 200, location: stored.location ?? '' }
  )
}

/**
 * What every accept checks before it holds anything: credits left when the work holds one (402),
 * and an inference server that can take it (503). Returns what the readiness check answered.
 */
export async function acceptChecks(
  env: Env,
  inference: InferenceClient,
  workspaceId: string,
  holdsCredit: boolean,
): Promise<Readiness> {
  if (holdsCredit && (await getUsage(env.DB, workspaceId)).available <= 0) throw quotaExhausted()
  return assertProcessorAvailable(inference)
}

/** Checks, sources, rows with holds, runners; returns the id the answer is about. */
async function insertAndStart<T, C>(ctx: AcceptContext, spec: JobSpec<T, C>): Promise<string> {
  const { env, auth } = ctx
  // Anonymous removals spend the daily allowance instead of credits.
  const anonymous = auth.kind === 'anonymous'
  const holds = JOB_KINDS[spec.kind].holdsCredit && !anonymous
  const checked = (await spec.check?.()) as C
  const readiness = await acceptChecks(env, ctx.inference, auth.workspaceId, holds)
  // One job takes the ready server for its first attempt; a batch's jobs each ask, so they spread.
  const ready: ReadyHint | undefined =
    readiness.state === 'ready' && readiness.url
      ? { url: readiness.url, modelVersion: readiness.modelVersion, at: Date.now() }
      : undefined
  const refund = anonymous ? await takeAllowance(env, auth) : null
  try {
    const jobId = ctx.jobId ?? crypto.randomUUID()
    const drafted = await spec.draft(jobId, checked)
    await insertDrafted(ctx, drafted, holds)
    const single = drafted.jobs.length === 1
    const unstarted = await startJobs(
      env,
      drafted.jobs.map((job) => jobStart(ctx, job, single ? ready : undefined)),
    )
    if (unstarted && spec.unscheduled) {
      throw new ApiError('processor_unavailable', `The ${spec.unscheduled} could not be scheduled`, { retryAfter: 1 })
    }
    return drafted.id ?? jobId
  } catch (err) {
    await refund?.()
    throw err
  }
}

async function insertDrafted(ctx: AcceptContext, drafted: Drafted, hold: boolean): Promise<void> {
  const { env, auth } = ctx
  const rows = drafted.jobs.map((job) => jobRow(auth.workspaceId, job))
  const guard = drafted.uploads?.length ? uploadsStillReady(env.DB, auth.workspaceId, drafted.uploads) : drafted.guard
  const inserted = await insertJobs(env.DB, rows, { hold, alongside: drafted.alongside, guard })
  if (inserted < rows.length) throw (await guard?.refused()) ?? new Error('Expected every job to be inserted')
}

/** The job's row: the one place its columns are filled from a draft. */
function jobRow(workspaceId: string, job: JobDraft): NewJob {
  return {
    id: job.id,
    workspaceId,
    kind: job.kind,
    options: job.options,
    sourceKey: job.sourceKey,
    otherSourceKeys: job.otherSourceKeys,
    format: job.format ?? 'png',
    batchId: job.batchId,
    projectId: job.projectId,
  }
}

function jobStart(ctx: AcceptContext, job: JobDraft, ready: ReadyHint | undefined): JobStart {
  return {
    jobId: job.id,
    workspaceId: ctx.auth.workspaceId,
    correlationId: ctx.requestId,
    ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
    kind: job.kind,
    input: job.input,
    ...(job.batchId ? { batchId: job.batchId } : {}),
    ...(ready ? { ready } : {}),
  }
}

/** The bounded wait, then the answer as it then stands. */
async function answer<T, C>(ctx: AcceptContext, spec: JobSpec<T, C>, id: string): Promise<Accepted<T>> {
  const finished = await waitForJob(ctx.env, id, (ctx.waitSeconds ?? 0) * 1000)
  return { job: await spec.present(id), finished, location: spec.location(id) }
}

/** How a public job (a removal, a try-on) is answered: the job, at `/v1/jobs/{id}`. */
export function publicJob(ctx: AcceptContext): Pick<JobSpec<Job>, 'present' | 'location' | 'unscheduled'> {
  return {
    present: async (id) => toJob(await findJob(ctx.env.DB, ctx.auth.workspaceId, id), ctx.env.RESULT_SIGNING_KEY),
    location: (id) => `/v1/jobs/${id}`,
    unscheduled: 'job',
  }
}
