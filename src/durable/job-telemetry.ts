/**
 * @module
 * What the runner tells operators about a job (docs/operations.md): ONE JSON log line per
 * transition (queued, each processing stage, terminal) with the job's kind, level, stage timings
 * and outcome, and, where an Analytics Engine dataset is bound (`ANALYTICS`), a datapoint with the
 * same facts. The workspace appears only hashed; the trace id is the accepting request's, so the
 * edge's request line, these lines and the inference server's line of the same job share it.
 */
import { isTerminalStatus, type JobStage, type JobStatus } from '../contract/stages'
import type { Env } from '../env'
import { jobKind } from '../jobs'
import { log, logSink, workspaceTag } from '../lib/log'

/** The runner's stored state as telemetry reads it. */
export interface TracedJob {
  jobId: string
  workspaceId: string
  correlationId: string
  traceId?: string
  kind: string
  input: unknown
  status: JobStatus
  stage: JobStage
  attempts: number
  queuedSince: number
  /** When the current stage began (ms since epoch). */
  stageSince?: number
  /** Milliseconds spent per stage so far (a stage entered twice, as on a retry, adds up). */
  timings?: Record<string, number>
}

/** The terminal facts: how the job ended. */
export interface JobEnd {
  error?: { code: string }
}

/**
 * Closes the stage the job is leaving (its time added to `timings`) and starts the clock of the
 * one it enters. Call before the state is saved with its new stage.
 */
export function enterStage(job: TracedJob, leaving: JobStage | undefined, now = Date.now()): number | undefined {
  job.timings ??= {}
  const since = job.stageSince
  job.stageSince = now
  if (leaving === undefined || since === undefined) return undefined
  const ms = now - since
  job.timings[leaving] = (job.timings[leaving] ?? 0) + ms
  return ms
}

/** Writes the job's transition: its log line and, where bound, its datapoint. Never throws. */
export async function recordTransition(
  env: Env,
  job: TracedJob,
  { previousStageMs, end }: { previousStageMs?: number; end?: JobEnd } = {},
): Promise<void> {
  try {
    const terminal = isTerminalStatus(job.status)
    const level = jobKind(job.kind).level?.(job.input)
    const workspace = await workspaceTag(job.workspaceId)
    const totalMs = terminal ? Date.now() - job.queuedSince : undefined
    log(job.status === 'failed' ? 'warn' : 'info', 'job', {
      jobId: job.jobId,
      requestId: job.correlationId,
      traceId: job.traceId,
      workspace,
      kind: job.kind,
      level,
      status: job.status,
      stage: job.stage,
      attempts: job.attempts,
      ...(previousStageMs !== undefined ? { previousStageMs } : {}),
      ...(terminal ? { outcome: job.status, errorCode: end?.error?.code, totalMs, timings: job.timings ?? {} } : {}),
    })
    if (env.ANALYTICS) {
      // Layout (docs/deploy.md "Analytics Engine"): blobs are labels, doubles are numbers, the index
      // (the sampling key) is the hashed workspace.
      logSink.datapoint(env.ANALYTICS, {
        indexes: [workspace],
        blobs: [
          job.kind,
          level ?? '',
          job.status,
          job.stage,
          terminal ? job.status : '',
          end?.error?.code ?? '',
          job.traceId ?? '',
          job.jobId,
        ],
        doubles: [previousStageMs ?? 0, totalMs ?? 0, job.attempts, ...stageDoubles(job.timings)],
      })
    }
  } catch (err) {
    // Telemetry never fails a job.
    log('warn', 'job telemetry failed', { jobId: job.jobId, error: String(err) })
  }
}

/** The per-stage milliseconds in a fixed order (doubles 4 to 9): queued, preparing, segmenting, refining, rendering, storing. */
const TIMED_STAGES: JobStage[] = ['queued', 'preparing', 'segmenting', 'refining', 'rendering', 'storing']
const stageDoubles = (timings: Record<string, number> = {}) => TIMED_STAGES.map((stage) => timings[stage] ?? 0)
