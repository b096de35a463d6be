/**
 * @module
 * Prometheus metrics at `GET /metrics` (docs/operations.md "Metrics") and the one log line per
 * request. `observeRequests` is the single middleware that counts every request and logs it; job
 * routes add their run (queue wait, stages, steps, outcome) through the request's `telemetry`
 * (stream.ts). The limiter's queue and slots are read at scrape time, so they are never stale.
 *
 * `/metrics` is not open by default: it answers only with `Authorization: Bearer $METRICS_TOKEN`,
 * and not at all (404) when no token is configured. A separate token rather than the signing key:
 * a scraper holding the signing key could sign inference calls (docs/decisions.md).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { newTraceId, parseTraceparent, TRACEPARENT_HEADER } from '../../src/contract/trace.js'
import { InferenceError, toInferenceError } from './errors.js'
import type { Routes } from './http.js'
import type { Limiter } from './limiter.js'
import { log } from './log.js'

/** How a job's work ended: its `done` frame, an `error` frame, or stopped because its caller left. */
export type JobOutcome = 'done' | 'error' | 'stopped'

/** What a job route's stream reports once its work ends (stream.ts). */
export interface JobRecord {
  outcome: JobOutcome
  /** From the request's arrival at the limiter to its slot. */
  queueMs: number
  /** From the slot to the end of the work (the model run and everything around it). */
  runMs: number
  /** Milliseconds per stage frame, from the frame to the next one (or the end). */
  stages: Record<string, number>
  /** The work's own step timings (the `done` frame's `timings`), when it finished. */
  steps?: Record<string, number>
  /** The error frame's code, when it failed. */
  errorCode?: string
}

/** Per request: its ids for log lines, and where a job route reports its run. */
export interface RequestTelemetry {
  requestId: string
  traceId: string
  job(record: JobRecord): void
}

declare module 'hono' {
  interface ContextVariableMap {
    telemetry?: RequestTelemetry
  }
}

/** Seconds: from a cached tiny image to a 25 MP `high` run on a slow CPU. */
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160]

/** The process's own metrics (RSS, heap, event-loop lag, GC) are collected once per process. */
let processRegistry: Registry | undefined
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/** A model slot as the readiness route sees it: set once the model has loaded. */
interface ModelSlot {
  current?: unknown
}

/** The server's metrics: one registry per app (tests build several apps in one process). */
export class Metrics {
  readonly registry = new Registry()
  readonly requests = new Counter({
    name: 'inference_requests_total',
    help: 'HTTP requests answered, by method, route and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  })
  readonly errors = new Counter({
    name: 'inference_errors_total',
    help: 'Failures by route, status code and error code: error answers, and error frames of job answers (status 200).',
    labelNames: ['route', 'status', 'code'] as const,
    registers: [this.registry],
  })
  readonly jobs = new Counter({
    name: 'inference_jobs_total',
    help: 'Job runs by route and outcome (done, error, stopped: the caller went away mid-run).',
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  })
  readonly jobSeconds = new Histogram({
    name: 'inference_job_run_seconds',
    help: 'Time a job held its slot: the model run and the steps around it, by route and outcome.',
    labelNames: ['route', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  })
  readonly queueSeconds = new Histogram({
    name: 'inference_queue_wait_seconds',
    help: 'Time a job waited for a slot, by route.',
    labelNames: ['route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  })
  readonly stageSeconds = new Histogram({
    name: 'inference_stage_seconds',
    help: 'Time from a stage frame to the next frame (segmenting, refining, rendering), by route.',
    labelNames: ['route', 'stage'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  })
  readonly stepSeconds = new Histogram({
    name: 'inference_step_seconds',
    help: "A finished job's step timings (its done frame's timings: decode, segment, encode, ...), by route.",
    labelNames: ['route', 'step'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  })

  constructor(limiter: Limiter, model: ModelSlot) {
    const registers = [this.registry]
    const stats = () => limiter.stats
    new Gauge({
      name: 'inference_queue_length',
      help: 'Requests waiting for a slot now: what an autoscaler should read.',
      registers,
      collect() {
        this.set(stats().queued)
      },
    })
    new Gauge({
      name: 'inference_queue_limit',
      help: 'Requests that may wait; past it a request is refused with 503.',
      registers,
      collect() {
        this.set(stats().queueLimit)
      },
    })
    new Gauge({
      name: 'inference_slots',
      help: 'Model slots by state: busy (running a job) or free.',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const { running, concurrency } = stats()
        this.set({ state: 'busy' }, running)
        this.set({ state: 'free' }, Math.max(0, concurrency - running))
      },
    })
    new Gauge({
      name: 'inference_model_ready',
      help: '1 once the model has loaded (the server answers /health/ready), else 0.',
      registers,
      collect() {
        this.set(model.current ? 1 : 0)
      },
    })
    new Counter({
      name: 'inference_abandoned_total',
      help: 'Calls whose caller went away: while queued (never run) or while running (stopped at a step).',
      labelNames: ['phase'] as const,
      registers,
      collect() {
        const { dropped, stopped } = stats()
        this.reset()
        this.inc({ phase: 'queued' }, dropped)
        this.inc({ phase: 'running' }, stopped)
      },
    })
  }

  /** The scrape: this app's metrics and the process's. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const merged = Registry.merge([this.registry, processMetrics()])
    return { contentType: merged.contentType, body: await merged.metrics() }
  }

  /** Records a job's run. */
  recordJob(route: string, record: JobRecord): void {
    this.jobs.inc({ route, outcome: record.outcome })
    this.jobSeconds.observe({ route, outcome: record.outcome }, record.runMs / 1000)
    this.queueSeconds.observe({ route }, record.queueMs / 1000)
    for (const [stage, ms] of Object.entries(record.stages)) this.stageSeconds.observe({ route, stage }, ms / 1000)
    for (const [step, ms] of Object.entries(record.steps ?? {})) this.stepSeconds.observe({ route, step }, ms / 1000)
    if (record.errorCode) this.errors.inc({ route, status: '200', code: record.errorCode })
  }
}

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/

/**
 * The matched route's pattern (never the raw path: no ids, no query, bounded label values); a
 * request no route matched is `unmatched`.
 */
function routeOf(c: Context): string {
  const path = c.req.routePath
  return !path || path.endsWith('*') ? 'unmatched' : path
}

const round = (ms: number) => Math.round(ms * 10) / 10

/**
 * A health probe that passed: counted, never logged. The edge asks `/health/ready` before every
 * job and balancers probe every few seconds, so their lines would drown the work; a failed probe
 * (non-2xx) still gets its line.
 */
const isQuietProbe = (route: string, status: number) => route.startsWith('/health/') && status < 300

/**
 * Counts every request and logs it once, after its answer is made (a passing health probe is only
 * counted: `isQuietProbe`): method, route, status, duration, the caller's `X-Request-Id` (or a new
 * one) and the `traceparent`'s trace id (or a new one). The logged route is the pattern: the
 * path's query never reaches a log line.
 */
export function observeRequests(metrics: Metrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now()
    const inbound = c.req.header('x-request-id')
    const requestId = inbound && VALID_REQUEST_ID.test(inbound) ? inbound : `inf_${crypto.randomUUID()}`
    const traceId = parseTraceparent(c.req.header(TRACEPARENT_HEADER))?.traceId ?? newTraceId()
    const ids = { requestId, traceId }
    c.set('telemetry', {
      ...ids,
      job(record) {
        const route = routeOf(c)
        metrics.recordJob(route, record)
        const { stages, steps, ...rest } = record
        log(record.outcome === 'error' ? 'warn' : 'info', 'job', { route, ...ids, ...rest, stages, steps })
      },
    })
    await next()
    const route = routeOf(c)
    const status = c.res.status
    metrics.requests.inc({ method: c.req.method, route, status: String(status) })
    if (status >= 400) {
      const code = c.error ? toInferenceError(c.error).code : status === 404 ? 'not_found' : 'unknown'
      metrics.errors.inc({ route, status: String(status), code })
    }
    c.header('X-Request-Id', requestId)
    if (isQuietProbe(route, status)) return
    const durationMs = round(performance.now() - started)
    // A 503 is the server saying "busy" or "loading", not failing: a warning, not an error.
    log(status >= 500 && status !== 503 ? 'error' : status >= 400 ? 'warn' : 'info', 'request', {
      method: c.req.method,
      route,
      status,
      durationMs,
      ...ids,
    })
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest()

/** Whether `authorization` is `Bearer <token>`, compared in constant time. */
function bearerMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? ''
  return timingSafeEqual(digest(given), digest(token))
}

/**
 * `GET /metrics` (Prometheus text) for a scraper holding `token` (`METRICS_TOKEN`); without a
 * configured token the route answers 404, as if it did not exist.
 */
export function metricsRoutes(metrics: Metrics, token: string | undefined): Routes {
  return (app) => {
    app.get('/metrics', async (c) => {
      if (!token)
        return c.json({ code: 'not_found', message: 'Metrics are off: set METRICS_TOKEN', retryable: false }, 404)
      if (!bearerMatches(c.req.header('authorization'), token)) {
        throw new InferenceError('invalid_signature', 'Expected Authorization: Bearer <METRICS_TOKEN>')
      }
      const { contentType, body } = await metrics.scrape()
      return c.body(body, 200, { 'Content-Type': contentType })
    })
  }
}
