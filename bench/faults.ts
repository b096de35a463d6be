/**
 * `npm run bench -- faults` (issue 15 item 7): faults, scripted, against the real stack (the
 * inference server with the real model and `wrangler dev`, started here on their own ports and
 * state, a webhook receiver on 127.0.0.1 subscribed to every event):
 * 1. `kill`: the inference server SIGKILLed mid-batch, then started again on its port;
 * 2. `freeze`: the inference server SIGSTOPped mid-batch (until every job of it has ended), then SIGCONT;
 * 3. `wrangler-restart`: `wrangler dev` stopped while a webhook retry is pending, kept down past
 *    the retry's due time, and started again (the new process must send the overdue retry);
 * 4. `receiver-timeout`: a receiver that holds the first attempt past the 15 s delivery timeout.
 * Each ends with the invariants: every job terminal, held = 0, every delivery delivered (or
 * failed) with its attempts on the retry schedule, nothing duplicated (one terminal event per job,
 * one delivery per event), and the inference server drained afterwards (nothing running or
 * queued for callers that are gone). Writes bench/results/faults-<name>.json.
 *
 * The deadlines are the production defaults (a call: 60 s + 4 s per megapixel; readiness: 5 s).
 * Shorter ones (10 s, 1 s) are too tight for a busy shared 2-core machine, where model runs took
 * 7–10 s: behind a queue of four, a slow machine looks like a failing server.
 * Flags: --name latest --batch 4 --verbose; to reproduce one case, --only kill,freeze and
 * --var NAME=VALUE (a Worker var, e.g. --var INFERENCE_READY_TIMEOUT_MS=1000; repeatable).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { TERMINAL_STATUSES } from '../src/contract/stages.js'
import { sharp } from './lib/deps.js'
import { type Attempt, startReceiver } from './lib/receiver.js'
import { type ApiStack, type InferenceServer, startApi, startInference } from './lib/stack.js'
import { machineInfo, RESULTS_DIR, ROOT, sleep, until as waitUntil } from './lib/util.js'

const { values: flags } = parseArgs({
  options: {
    name: { type: 'string', default: 'latest' },
    batch: { type: 'string', default: '4' },
    verbose: { type: 'boolean', default: false },
    only: { type: 'string' },
    var: { type: 'string', multiple: true, default: [] },
  },
})
const log = (msg: string) => process.stderr.write(`${msg}\n`)
const OPTIONS = { quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
const TERMINAL: readonly string[] = TERMINAL_STATUSES
const TERMINAL_EVENT = /job\.(completed|failed|canceled)/
const VARS: Record<string, string> = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  ...Object.fromEntries(flags.var.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)])),
}
const ONLY = flags.only?.split(',')
/** The outbox's first delays between attempts (docs/decisions.md, Webhooks): at once, 5 s, 5 min. */
const RETRY_DELAYS_MS = [5_000, 300_000]
const DELIVERY_TIMEOUT_MS = 15_000
/** How long `wrangler dev` stays down: past the 5 s retry's due time. */
const WRANGLER_DOWN_MS = 8_000
const WAIT_MS = 5 * 60_000

type Job = { id: string; status: string; stage: string; error: { code: string; message: string } | null }
type Delivery = { id: string; eventId: string; status: string; attempts: number; eventType?: string }

const startedAt = Date.now()
const machine = machineInfo()
let inference: InferenceServer = await startInference({}, flags.verbose)
const api: ApiStack = await startApi(inference, {
  vars: VARS,
  scopes: ['images:write', 'jobs:read', 'webhooks:write'],
  verbose: flags.verbose,
})
const receiver = await startReceiver()
const call = (path: string, init: RequestInit = {}) =>
  fetch(`${api.url}${path}`, { ...init, headers: { authorization: `Bearer ${api.apiKey}`, ...init.headers } })
const json = async <T>(res: Response): Promise<T> => {
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

const scenarios: Record<string, unknown>[] = []
/** What each fault measured of itself (e.g. how long the killed server took to answer ready again). */
const faultNotes: Record<string, Record<string, number>> = {}
/** Which job each delivery is about, from what the receiver was sent. */
const jobOfDelivery = new Map<string, string>()
try {
  const endpoint = await json<{ id: string }>(
    await call('/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    }),
  )
  const image = new Uint8Array(await sharp(`${ROOT}bench/fixtures/astronaut.png`).resize(256).png().toBuffer())
  const uploads = await Promise.all(Array.from({ length: Number(flags.batch) }, () => upload(image)))

  scenarios.push(
    await scenario('kill', endpoint.id, async () => {
      const jobs = await batchInFlight(uploads)
      const killedAt = Date.now()
      process.kill(inference.child.proc.pid!, 'SIGKILL')
      await sleep(2000)
      inference = await startInference({}, flags.verbose, {
        port: portOf(inference.url),
        signingKey: inference.signingKey,
      })
      faultNotes.kill = { readyAgainAfterMs: Date.now() - killedAt }
      log(`killed; the new server answered ready ${Date.now() - killedAt} ms later`)
      return jobs
    }),
  )
  scenarios.push(
    await scenario('freeze', endpoint.id, async () => {
      const jobs = await batchInFlight(uploads)
      const pid = inference.child.proc.pid!
      process.kill(pid, 'SIGSTOP')
      try {
        await allTerminal(jobs)
      } finally {
        process.kill(pid, 'SIGCONT')
      }
      return jobs
    }),
  )
  scenarios.push(
    await scenario('wrangler-restart', endpoint.id, async () => {
      receiver.mode = 'fail-first'
      const jobs = await batchInFlight(uploads.slice(0, 1))
      await allTerminal(jobs)
      // The first attempt of the job's terminal event failed: its retry is due 5 s later.
      const terminalFailed = (a: Attempt) => a.answered === 500 && a.jobId === jobs[0] && TERMINAL_EVENT.test(a.type)
      await until(() => receiver.attempts.some(terminalFailed), 'the terminal event to fail once')
      const stoppedAt = Date.now()
      const pendingFor = stoppedAt - (receiver.attempts.find(terminalFailed)?.at ?? 0)
      if (pendingFor >= RETRY_DELAYS_MS[0])
        throw new Error(`the retry was already due ${pendingFor} ms before the stop`)
      await api.restart(WRANGLER_DOWN_MS)
      const upAt = Date.now()
      faultNotes['wrangler-restart'] = { stoppedAfterFailedAttemptMs: pendingFor, downAndRestartMs: upAt - stoppedAt }
      log(`wrangler stopped ${pendingFor} ms after the failed attempt; up again ${upAt - stoppedAt} ms later`)
      return jobs
    }),
  )
  scenarios.push(
    await scenario('receiver-timeout', endpoint.id, async () => {
      receiver.mode = 'timeout-first'
      return batchInFlight(uploads.slice(0, 1))
    }),
  )
} finally {
  receiver.mode = 'ok'
  await api.stop()
  await inference.stop()
  await receiver.close()
}

const passed = scenarios.every((s) => Object.values(s.invariants as Record<string, boolean>).every(Boolean))
const report = {
  name: flags.name,
  date: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - startedAt) / 1000),
  machine,
  note: 'A 2-core machine shared with other work; timings move with its load, the invariants must not.',
  settings: {
    ...VARS,
    batch: Number(flags.batch),
    retryDelaysMs: RETRY_DELAYS_MS,
    deliveryTimeoutMs: DELIVERY_TIMEOUT_MS,
  },
  scenarios,
  passed,
}
mkdirSync(RESULTS_DIR, { recursive: true })
const out = `${RESULTS_DIR}faults-${flags.name}.json`
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
log(`wrote ${out}: ${passed ? 'every invariant held' : 'an invariant broke'}`)
if (!passed) process.exitCode = 1

/** A scenario's result, or what stopped it (the report is written either way). */
async function scenario(name: string, endpointId: string, fault: () => Promise<string[]>) {
  if (ONLY && !ONLY.includes(name)) return { name, skipped: true, invariants: {} }
  try {
    return await runScenario(name, endpointId, fault)
  } catch (err) {
    log(`${name} broke: ${String(err)}`)
    return { name, error: String(err), invariants: { completed: false } }
  }
}

/** Runs a fault, waits for its jobs and their deliveries to settle, and checks the invariants. */
async function runScenario(name: string, endpointId: string, fault: () => Promise<string[]>) {
  log(`— ${name}`)
  const t0 = Date.now()
  const firstAttempt = receiver.attempts.length
  const jobIds = await fault()
  const jobs = await allTerminal(jobIds)
  const usage = await json<{ held: number; used: number }>(await call('/v1/usage'))
  const deliveries = await settledDeliveries(endpointId, jobIds)
  const attempts = receiver.attempts.slice(firstAttempt).filter((a) => a.jobId && jobIds.includes(a.jobId))
  receiver.mode = 'ok'
  const terminalEvents = deliveries.filter((d) => d.eventType && TERMINAL_EVENT.test(d.eventType))
  const schedule = onSchedule(attempts)
  const drained = await inferenceDrained()
  const result = {
    name,
    seconds: Math.round((Date.now() - t0) / 1000),
    fault: faultNotes[name] ?? {},
    jobs: jobs.map((j) => ({ status: j.status, stage: j.stage, error: j.error })),
    usage,
    inference: drained.stats,
    deliveries: deliveries.map(({ status, attempts, eventType }) => ({ eventType, status, attempts })),
    attemptGapsMs: schedule.gaps,
    invariants: {
      everyJobTerminal: jobs.every((j) => TERMINAL.includes(j.status)),
      heldZero: usage.held === 0,
      everyDeliveryDone: deliveries.every((d) => d.status === 'delivered' || d.status === 'failed'),
      attemptsOnSchedule: schedule.ok,
      oneTerminalEventPerJob: jobIds.every((id) => terminalEvents.filter((d) => deliveryJob(d) === id).length === 1),
      oneDeliveryPerEvent: new Set(deliveries.map((d) => d.eventId)).size === deliveries.length,
      oneAcknowledgedAttemptPerDelivery: acknowledgedOnce(attempts),
      inferenceDrained: drained.ok,
    },
  }
  log(JSON.stringify(result.invariants))
  return result
}

/**
 * Whether the inference server ends with nothing running or queued once every job has ended:
 * calls the edge abandoned must not keep it busy (its `dropped`/`stopped` counters say how many
 * it let go). Waits up to a minute for a model run that cannot be interrupted to finish.
 */
async function inferenceDrained(): Promise<{ ok: boolean; stats: Record<string, unknown> }> {
  let stats: Record<string, unknown> = {}
  const idle = async () => {
    stats = (await (await fetch(`${inference.url}/health/ready`)).json()) as Record<string, unknown>
    return stats.running === 0 && stats.queued === 0
  }
  const ok = await until(idle, 'the inference server to drain', 60_000).then(
    () => true,
    () => false,
  )
  return { ok, stats }
}

function deliveryJob(d: Delivery): string | undefined {
  return jobOfDelivery.get(d.id)
}

/** A batch of the uploads; resolves with its job ids once one of them is running the model. */
async function batchInFlight(uploadIds: string[]): Promise<string[]> {
  const batch = await json<{ id: string; jobs: Job[] }>(
    await call('/v1/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ uploadIds, options: OPTIONS }),
    }),
  )
  const ids = batch.jobs.map((j) => j.id)
  let seen = ''
  await until(
    async () => {
      const jobs = await Promise.all(ids.map(async (id) => json<Job>(await call(`/v1/jobs/${id}`))))
      seen = JSON.stringify(jobs.map((j) => [j.status, j.stage, j.error?.code]))
      if (jobs.every((j) => TERMINAL.includes(j.status))) throw new Error(`the batch ended before the fault: ${seen}`)
      return jobs.some((j) => j.status === 'processing' && j.stage !== 'preparing')
    },
    () => `a job of the batch to reach the model (jobs: ${seen})`,
  )
  return ids
}

async function allTerminal(ids: string[]): Promise<Job[]> {
  let jobs: Job[] = []
  await until(async () => {
    jobs = await Promise.all(ids.map(async (id) => json<Job>(await call(`/v1/jobs/${id}`))))
    return jobs.every((j) => TERMINAL.includes(j.status))
  }, 'every job to end')
  return jobs
}

/**
 * The endpoint's deliveries of these jobs' events, once each job's terminal event has reached the
 * receiver and no delivery of the endpoint (these jobs' or any other) is pending or retrying. A
 * terminal event that never arrives (lost in a restart) times this out, and the scenario fails.
 */
async function settledDeliveries(endpointId: string, jobIds: string[]): Promise<Delivery[]> {
  let mine: Delivery[] = []
  const settled = (d: Delivery) => d.status === 'delivered' || d.status === 'failed'
  await until(async () => {
    for (const a of receiver.attempts) if (a.jobId) jobOfDelivery.set(a.deliveryId, a.jobId)
    const { deliveries } = await json<{ deliveries: Delivery[] }>(await call(`/v1/webhooks/${endpointId}/deliveries`))
    mine = deliveries.filter((d) => jobIds.includes(jobOfDelivery.get(d.id) ?? ''))
    const ended = (id: string) => receiver.attempts.some((a) => a.jobId === id && TERMINAL_EVENT.test(a.type))
    return jobIds.every(ended) && deliveries.every(settled)
  }, "every job's terminal event to reach the receiver and every delivery to settle")
  return mine
}

/** Gaps between attempts of each delivery, against the schedule's delays. */
function onSchedule(attempts: { deliveryId: string; at: number; answered: number | 'held' }[]) {
  const gaps: Record<string, number[]> = {}
  let ok = true
  const byDelivery = new Map<string, typeof attempts>()
  for (const a of attempts) byDelivery.set(a.deliveryId, [...(byDelivery.get(a.deliveryId) ?? []), a])
  for (const [id, list] of byDelivery) {
    gaps[id] = []
    for (let i = 1; i < list.length; i++) {
      const gap = list[i].at - list[i - 1].at
      gaps[id].push(gap)
      // Delays count from an attempt's start; an attempt that timed out is retried when it ends if that is later.
      const due = Math.max(RETRY_DELAYS_MS[i - 1], list[i - 1].answered === 'held' ? DELIVERY_TIMEOUT_MS : 0)
      // Never early (1 s for clock granularity), and not more than a minute late.
      if (gap < due - 1000 || gap > due + 60_000) ok = false
    }
  }
  return { ok, gaps }
}

/** No delivery was acknowledged (2xx) more than once: a receiver sees a repeat only after a failure. */
function acknowledgedOnce(attempts: { deliveryId: string; answered: number | 'held' }[]): boolean {
  const acked = attempts.filter((a) => a.answered === 200).map((a) => a.deliveryId)
  return new Set(acked).size === acked.length
}

async function upload(bytes: Uint8Array): Promise<string> {
  const created = await json<{ id: string; uploadUrl: string }>(await call('/v1/uploads', { method: 'POST' }))
  const put = await call(created.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: bytes })
  if (put.status !== 204) throw new Error(`PUT: ${put.status} ${await put.text()}`)
  await json(await call(`/v1/uploads/${created.id}/complete`, { method: 'POST' }))
  return created.id
}

/** Waits for `probe`, at most the bench's WAIT_MS unless told otherwise. */
function until(probe: () => boolean | Promise<boolean>, what: string | (() => string), waitMs = WAIT_MS) {
  return waitUntil(probe, what, waitMs)
}

function portOf(url: string): number {
  return Number(new URL(url).port)
}
