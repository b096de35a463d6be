/**
 * @module
 * JobRun: one Durable Object per job (DESIGN.md §1). It runs the stages in order, keeps the job's
 * event log (`JobEventLog`, job-events.ts), serves the bounded wait, and writes every state change
 * through to D1 together with the credit settlement, so a job ends terminal with its hold settled once.
 */
import { DurableObject } from 'cloudflare:workers'
import { isTerminalStatus, type JobStage, type JobStatus } from '../contract/stages'
import { newTraceId } from '../contract/trace'
import type { Env } from '../env'
import { type JobKind, jobKind } from '../jobs'
import { JobRejected } from '../jobs/kind'
import { type JobEventType, jobEvent, projectEvent, SSE_ONLY_TYPES } from '../lib/events'
import { log } from '../lib/log'
import { putHashed } from '../lib/storage'
import { iso } from '../lib/time'
import { completeBatchIfDone } from '../services/batches'
import { callDeadlineMs, callWork, untilAborted } from '../services/deadlines'
import { deadlinePassed, InferenceFailure, type Readiness } from '../services/inference'
import { type CallOutcome, receiveAnswer } from '../services/inference-answer'
import { finishJobStatements, type TerminalStatus, unfinishedJobUpdate } from '../services/job-store'
import { type JobStart, READY_HINT_MS, RESULT_RETENTION_MS } from '../services/jobs'
import { createServices, type Services } from '../services/context'
import { JobEventLog } from './job-events'
import { enterStage, recordTransition } from './job-telemetry'
import { type AttemptFailure, decideRetry } from './retry-policy'

export type { JobStart }

interface JobState extends JobStart {
  status: JobStatus
  stage: JobStage
  attempts: number
  queuedSince: number
  /** Set once the slot is released, the batch checked and every event handed to webhooks. */
  wrappedUp?: boolean
  /** Set once an internal kind's project event is logged. */
  reported?: boolean
  /** The server whose call ran past its deadline: the next attempt asks it last. */
  avoidUrl?: string
  /**
   * Why the first failed call failed (past its deadline, connection lost), so a job that then
   * finds no server ready, as after a server froze mid-call, still fails with its first cause.
   */
  failure?: string
  /** When the current stage began, and the milliseconds per stage so far (job-telemetry.ts). */
  stageSince?: number
  timings?: Record<string, number>
}

/** A job waiting for a workspace slot re-asks this often, in case a wake-up was lost. */
const SLOT_RECHECK_MS = 15_000
/** Delay before retrying the after-terminal work (slot release, webhooks) when it failed. */
const WRAP_UP_RETRY_MS = 5_000

/** The accept's readiness answer, once and while fresh (`JobStart.ready`); it is gone after the first attempt. */
function takeReadyHint(state: JobState, now: number): Readiness | undefined {
  const hint = state.ready
  if (!hint) return undefined
  delete state.ready
  return now - hint.at <= READY_HINT_MS ? { state: 'ready', url: hint.url, modelVersion: hint.modelVersion } : undefined
}

/** Thrown inside a run when the job was ended (canceled) by another call meanwhile. */
class JobEnded extends Error {}

export class JobRun extends DurableObject<Env> {
  #abort: AbortController | null = null
  #waiters = new Set<() => void>()
  readonly #events: JobEventLog
  readonly #services: Services

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    this.#services = createServices(env)
    this.#events = new JobEventLog(ctx.storage.sql, this.#services.config.sseKeepaliveMs)
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(
        `CREATE TABLE IF NOT EXISTS job (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL)`,
      )
      this.#events.createTable()
    })
  }

  /** Accepts the job; a second call (a retried RPC) changes nothing. */
  async start(input: JobStart): Promise<void> {
    if (this.#state()) return
    const now = Date.now()
    const state: JobState = { ...input, status: 'queued', stage: 'queued', attempts: 0, queuedSince: now }
    enterStage(state, undefined, now)
    this.#save(state)
    this.#emit('image.job.created.v1')
    await recordTransition(this.env, state)
    await this.ctx.storage.setAlarm(Date.now())
    await this.#events.publishPending(this.env).catch(() => undefined)
  }

  /** Called by the Workspace when a slot frees for this job. */
  async wake(): Promise<void> {
    const state = this.#state()
    if (state?.status === 'queued') await this.ctx.storage.setAlarm(Date.now())
  }

  /** Cancels now if nothing is in flight, else aborts the inference call (SPEC.md §3). */
  async cancel(): Promise<JobStatus> {
    const state = this.#state()
    if (!state || isTerminalStatus(state.status)) return state?.status ?? 'canceled'
    if (this.#abort) {
      this.#abort.abort(new Error('canceled'))
      return state.status
    }
    await this.ctx.storage.deleteAlarm()
    await this.#finish(state, 'canceled')
    return 'canceled'
  }

  /** Resolves true once the job is terminal, or false after `ms`. */
  async waitForTerminal(ms: number): Promise<boolean> {
    const state = this.#state()
    if (!state || isTerminalStatus(state.status)) return true
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.#waiters.delete(done)
        resolve(true)
      }
      const timer = setTimeout(() => {
        this.#waiters.delete(done)
        resolve(false)
      }, ms)
      this.#waiters.add(done)
    })
  }

  /** GET …/events: replays the log after `Last-Event-ID`, then streams live until terminal. */
  override async fetch(request: Request): Promise<Response> {
    const state = this.#state()
    const live = state !== null && !isTerminalStatus(state.status)
    return this.#events.stream(request.headers.get('last-event-id'), live)
  }

  override async alarm(): Promise<void> {
    const state = this.#state()
    if (!state) return
    if (isTerminalStatus(state.status)) return this.#wrapUp(state)
    try {
      await this.#run(state)
    } catch (err) {
      if (err instanceof JobEnded) return
      // Anything unforeseen still ends the job, so no hold is left behind.
      await this.#finish(this.#state() ?? state, 'failed', { code: 'processing_failed', message: String(err) })
    }
  }

  async #run(state: JobState): Promise<void> {
    const kind = jobKind(state.kind)
    const client = this.#services.inference
    // A job accepted before traces were kept gets its own, saved with its next transition.
    state.traceId ??= newTraceId()
    if (state.status === 'queued') {
      const slot = this.env.WORKSPACE.get(this.env.WORKSPACE.idFromName(state.workspaceId))
      if (!(await slot.acquire(state.jobId))) {
        await this.ctx.storage.setAlarm(Date.now() + SLOT_RECHECK_MS)
        return
      }
    }
    // The work goes to the server that answered ready: the accept's answer for a job started at
    // once (asked once per job), else asked now, on every later attempt.
    const readiness = takeReadyHint(state, this.#services.now()) ?? (await client.ready(state.avoidUrl))
    if (readiness.state !== 'ready') return this.#waitForCapacity(state, readiness.state, readiness.retryAfter)
    const starting = state.status === 'queued'
    await this.#advance(
      state,
      'processing',
      'preparing',
      starting ? { started_at: iso(), model_version: readiness.modelVersion ?? null } : {},
    )

    const job = { jobId: state.jobId, workspaceId: state.workspaceId, input: state.input }
    let parts: Awaited<ReturnType<JobKind<unknown>['parts']>>
    try {
      parts = await kind.parts(this.env, job)
    } catch (err) {
      if (!(err instanceof JobRejected)) throw err
      return this.#finish(state, 'failed', { code: err.code, message: err.message })
    }
    if (this.#endedElsewhere()) throw new JobEnded() // canceled while the parts were read: send nothing
    const abort = new AbortController()
    this.#abort = abort
    // A frozen server holds the call open forever: past its deadline the call is aborted and the
    // attempt counts as a lost server (retried elsewhere, or the job fails processor_unavailable).
    const work = callWork(parts, kind.workScale?.(state.input), kind.outputPixels?.(state.input))
    const deadlineMs = callDeadlineMs(this.#services.config.deadlines, work)
    const deadline = AbortSignal.timeout(deadlineMs)
    const signal = AbortSignal.any([abort.signal, deadline])
    let outcome: CallOutcome
    try {
      const answer = await client.call(readiness.url, kind.route, parts, signal, {
        traceId: state.traceId,
        requestId: state.correlationId,
      })
      outcome = await untilAborted(this.#receive(state, kind, job, answer), signal)
    } catch (err) {
      if (err instanceof JobEnded) throw err
      if (deadline.aborted && !abort.signal.aborted) {
        state.avoidUrl = readiness.url
        return this.#onInferenceError(state, deadlinePassed(deadlineMs), false)
      }
      return this.#onInferenceError(state, err, abort.signal.aborted)
    } finally {
      this.#abort = null
    }
    if (abort.signal.aborted) return this.#finish(state, 'canceled')
    try {
      await kind.completed?.(this.env, job, outcome.outputs)
    } catch (err) {
      if (!(err instanceof JobRejected)) throw err
      return this.#finish(state, 'failed', { code: err.code, message: err.message })
    }
    const result = outcome.outputs.find((o) => o.name === 'result')
    await this.#finish(
      state,
      'succeeded',
      undefined,
      {
        result_key: result?.key ?? null,
        result_content_type: result?.contentType ?? null,
        result_confidence: outcome.confidence ?? null,
        model_version: outcome.modelVersion,
        warnings: outcome.warnings.length ? JSON.stringify(outcome.warnings) : null,
      },
      {
        // The completed event says what the job's result says of its quality, so a webhook receiver
        // or the page can act on `low_confidence` without reading the job again.
        warnings: outcome.warnings,
        ...(outcome.confidence === undefined ? {} : { confidence: outcome.confidence }),
      },
    )
  }

  /**
   * Reads the answer as it comes: each stage is reported when the server passes it, and each
   * output streams into R2 (the job is `storing` from the first one).
   */
  #receive(
    state: JobState,
    kind: JobKind<unknown>,
    job: { jobId: string; workspaceId: string; input: unknown },
    answer: Response,
  ): Promise<CallOutcome> {
    return receiveAnswer(answer, {
      onStage: (stage) => this.#advance(state, 'processing', stage),
      store: async (output, body) => {
        await this.#advance(state, 'processing', 'storing')
        const key = kind.outputKey(job, { type: 'output', ...output })
        if (key === null) {
          await body.pipeTo(new WritableStream())
          return null
        }
        const stored = await putHashed(this.env.BUCKET, key, body, output.length, output.contentType)
        const { name, contentType, width, height } = output
        return { name, key, contentType, width, height, ...stored }
      },
      passThrough: (err) => err instanceof JobEnded,
    })
  }

  async #onInferenceError(state: JobState, err: unknown, aborted: boolean): Promise<void> {
    if (aborted) return this.#finish(state, 'canceled')
    if (!(err instanceof InferenceFailure)) throw err
    const { kind, code, message, retryAfter } = err
    return this.#retryOrFail(state, { type: 'call', kind, code, message, retryAfter })
  }

  #waitForCapacity(state: JobState, why: 'saturated' | 'unavailable', retryAfter?: number): Promise<void> {
    return this.#retryOrFail(state, { type: 'not-ready', why, retryAfter })
  }

  /** Carries out the retry policy's decision (retry-policy.ts): another attempt on an alarm, or the end. */
  async #retryOrFail(state: JobState, failure: AttemptFailure): Promise<void> {
    const decision = decideRetry(state, failure, this.#services.config.retry, this.#services.now())
    if (decision.action === 'fail') return this.#finish(state, 'failed', decision.error)
    state.attempts = decision.attempts
    state.failure = decision.failure
    // A call that failed leaves the job `preparing` its next attempt; one never sent is where it was.
    if (failure.type === 'call') await this.#advance(state, 'processing', 'preparing')
    else this.#save(state)
    await this.ctx.storage.setAlarm(Date.now() + decision.delayMs)
  }

  async #advance(state: JobState, status: JobStatus, stage: JobStage, extra: Record<string, unknown> = {}) {
    if (this.#endedElsewhere()) throw new JobEnded()
    const changed = state.status !== status || state.stage !== stage
    const previousStageMs = changed ? enterStage(state, state.stage) : undefined
    state.status = status
    state.stage = stage
    this.#save(state)
    await unfinishedJobUpdate(this.env.DB, state.jobId, { status, stage, ...extra }).run()
    if (changed) {
      this.#emit('image.job.progress.v1')
      await recordTransition(this.env, state, { previousStageMs })
    }
  }

  async #finish(
    state: JobState,
    status: TerminalStatus,
    error?: { code: string; message: string },
    extra: Record<string, unknown> = {},
    eventData: Record<string, unknown> = {},
  ): Promise<void> {
    if (this.#endedElsewhere()) return
    const fields: Record<string, unknown> = {
      ...(status === 'succeeded' ? { stage: 'complete', expires_at: iso(Date.now() + RESULT_RETENTION_MS) } : {}),
      error_code: error?.code ?? null,
      error_message: error?.message ?? null,
      ...extra,
    }
    await this.env.DB.batch(finishJobStatements(this.env.DB, state.jobId, status, fields))
    const previousStageMs = enterStage(state, state.stage)
    state.status = status
    if (status === 'succeeded') state.stage = 'complete'
    this.#save(state)
    await recordTransition(this.env, state, { previousStageMs, end: { error } })
    const type: JobEventType =
      status === 'succeeded'
        ? 'image.job.completed.v1'
        : status === 'failed'
          ? 'image.job.failed.v1'
          : 'image.job.canceled.v1'
    this.#emit(type, error ? { error } : eventData)
    for (const waiter of [...this.#waiters]) waiter()
    this.#events.closeStreams()
    await this.#wrapUp(state)
  }

  /**
   * What follows a terminal state, each step idempotent: free the workspace slot, complete the
   * batch if this was its last job, log an internal kind's project event, and hand the events on. Retried on an alarm until done.
   */
  async #wrapUp(state: JobState): Promise<void> {
    if (state.wrappedUp) return
    try {
      await this.env.WORKSPACE.get(this.env.WORKSPACE.idFromName(state.workspaceId)).release(state.jobId)
      if (state.batchId) await completeBatchIfDone(this.env, state.batchId, state.correlationId)
      if (!state.reported) {
        await this.#report(state)
        state.reported = true
        this.#save(state)
      }
      await this.#events.publishPending(this.env)
      state.wrappedUp = true
      this.#save(state)
    } catch (err) {
      log('warn', 'wrap-up failed, will retry', { jobId: state.jobId, traceId: state.traceId, error: String(err) })
      await this.ctx.storage.setAlarm(Date.now() + WRAP_UP_RETRY_MS)
    }
  }

  #emit(type: JobEventType, data: Record<string, unknown> = {}): void {
    const state = this.#state()!
    // An internal kind's job events stay here: its project hears of it through `report` instead.
    const internal = jobKind(state.kind).report !== undefined
    this.#events.record(jobEvent(type, state, data), SSE_ONLY_TYPES.includes(type) || internal)
  }

  /** The project event of an internal kind, once its job has ended (DESIGN.md §3 Refinements, Exports). */
  async #report(state: JobState): Promise<void> {
    const report = jobKind(state.kind).report
    if (!report) return
    const job = { jobId: state.jobId, workspaceId: state.workspaceId, input: state.input }
    const data = await report.describe(this.env, job)
    this.#events.record(projectEvent(report.event, { ...state, id: state.jobId }, data), false)
  }

  /** True when a cancel finished the job while a run was between steps. */
  #endedElsewhere(): boolean {
    const stored = this.#state()
    return stored !== null && isTerminalStatus(stored.status)
  }

  #state(): JobState | null {
    const row = this.ctx.storage.sql.exec<{ state: string }>('SELECT state FROM job WHERE id = 1').toArray()[0]
    return row ? (JSON.parse(row.state) as JobState) : null
  }

  /** Terminal states never change (DESIGN.md §3): a stale run cannot write over a cancel. */
  #save(state: JobState): void {
    if (!isTerminalStatus(state.status) && this.#endedElsewhere()) throw new JobEnded()
    this.ctx.storage.sql.exec('INSERT OR REPLACE INTO job (id, state) VALUES (1, ?)', JSON.stringify(state))
  }
}
