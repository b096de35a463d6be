/**
 * A job route's answer (docs/inference-protocol.md "Job answers"): a slot is taken first (a full
 * queue is still a plain 503 with Retry-After), then the answer starts at once and carries a
 * frame per stage as the work passes it, the outputs, and `done` — or an `error` frame when the
 * work fails after the answer began. The slot is freed when the work ends.
 *
 * The caller may go away (the edge aborts a call past its deadline, or on cancel): a request still
 * waiting for a slot then leaves the queue without running, and running work stops at its next
 * step boundary (a stage or an output), so nothing is encoded or sent for nobody. The model
 * thread's run itself cannot be stopped; the steps after it can.
 */
import type { Context } from 'hono'
import {
  type DoneFrame,
  encodeFrame,
  FRAMES_CONTENT_TYPE,
  type Frame,
  type Notice,
  type OutputFrame,
} from '../../src/contract/frames.js'
import type { InferenceStage } from '../../src/contract/stages.js'
import { InferenceError, toInferenceError } from './errors.js'
import type { Limiter } from './limiter.js'
import { errorFields, log } from './log.js'
import type { JobOutcome } from './metrics.js'

/** What a job's work writes to its answer. Each call is a step boundary: it throws once the caller has gone. */
export interface JobOutput {
  stage(stage: InferenceStage): void
  output(frame: Omit<OutputFrame, 'type' | 'length'>, bytes: Uint8Array): void
  /** Aborts when the caller goes away, for work with boundaries of its own (high's close-ups). */
  signal: AbortSignal
}

export interface JobSummary {
  warnings: Notice[]
  /** A removal's mask confidence (DoneFrame.confidence). */
  confidence?: number
  timings?: Record<string, number>
}

/** Thrown at a step boundary when the caller went away: the work ends there, quietly. */
export class CallerGone extends Error {
  constructor() {
    super('The caller went away; the work stopped at a step boundary')
    this.name = 'CallerGone'
  }
}

/** A part the route needs; a request without it is the edge's mistake, reported as bad input. */
export function requirePart(parts: Map<string, Uint8Array>, name: string): Uint8Array {
  const part = parts.get(name)
  if (!part) throw new InferenceError('invalid_input', `Expected a part named ${name}`)
  return part
}

/**
 * Runs `work` in a limiter slot and streams its frames.
 * @example return streamJob(c, limiter, segmenter.version, async (out) => { out.stage('segmenting'); … })
 */
export async function streamJob(
  c: Context,
  limiter: Limiter,
  modelVersion: string,
  work: (out: JobOutput) => Promise<JobSummary>,
): Promise<Response> {
  const caller = c.req.raw.signal
  const arrived = performance.now()
  const release = await limiter.admit(caller)
  const admitted = performance.now()
  const clock = stageClock(admitted)
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
  const writer = writable.getWriter()
  // A write to a caller that just went away fails; the next step boundary ends the work.
  const send = (frame: Frame, bytes?: Uint8Array) => void writer.write(encodeFrame(frame, bytes)).catch(() => {})
  const step = () => {
    if (caller.aborted) throw new CallerGone()
  }
  const out: JobOutput = {
    stage: (stage) => {
      step()
      clock.enter(stage)
      send({ type: 'stage', stage })
    },
    output: (frame, bytes) => {
      step()
      clock.enter(undefined)
      send({ type: 'output', ...frame, length: bytes.byteLength }, bytes)
    },
    signal: caller,
  }
  void (async () => {
    let outcome: JobOutcome = 'done'
    let steps: Record<string, number> | undefined
    let errorCode: string | undefined
    try {
      step() // a caller that left as the slot was handed over: not even a decode
      const summary = await work(out)
      steps = summary.timings
      const done: DoneFrame = { type: 'done', modelVersion, ...summary }
      send(done)
    } catch (err) {
      // Pipelines wrap what they catch, so the caller's signal (not the error's class) says why.
      if (caller.aborted) {
        outcome = 'stopped'
        return
      }
      outcome = 'error'
      const error = toInferenceError(err)
      errorCode = error.code
      if (error.status === 500)
        log('error', 'job failed', { ...errorFields(err), traceId: c.get('telemetry')?.traceId })
      send({ type: 'error', ...error.toJSON() })
    } finally {
      release(outcome === 'stopped' ? 'stopped' : 'finished')
      void writer.close().catch(() => {})
      const ended = performance.now()
      c.get('telemetry')?.job({
        outcome,
        queueMs: admitted - arrived,
        runMs: ended - admitted,
        stages: clock.end(ended),
        steps,
        errorCode,
      })
    }
  })()
  return c.body(readable, 200, { 'Content-Type': FRAMES_CONTENT_TYPE, 'X-Model-Version': modelVersion })
}

/** Milliseconds per stage: a stage lasts from its frame to the next frame (a stage or an output) or the end. */
function stageClock(start: number) {
  const stages: Record<string, number> = {}
  let current: { stage: string; since: number } | undefined
  let at = start
  const close = (now: number) => {
    if (current) stages[current.stage] = (stages[current.stage] ?? 0) + now - current.since
    at = now
  }
  return {
    enter(stage: string | undefined) {
      close(performance.now())
      current = stage === undefined ? undefined : { stage, since: at }
    },
    end(now: number): Record<string, number> {
      close(now)
      current = undefined
      return stages
    },
  }
}
