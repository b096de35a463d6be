/**
 * The JobRun Durable Object driven alarm by alarm. Jobs are created the way `acceptJobs` does (the
 * row and its credit hold in one D1 batch through `insertJobs`, then the runner's `start`), but the
 * alarm `start` schedules is parked an hour away in the same turn, and every run afterwards is
 * fired by the test: `step` runs the due alarm (as `runDurableObjectAlarm` does) and parks the
 * retry that run scheduled, inside `blockConcurrencyWhile`, so no real timer can run the job
 * between two observations. Nothing here waits on a timer or asserts how long anything took.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { afterEach, describe, expect, it } from 'vitest'
import type { JobRun } from '../../src/durable/job-run'
import { JOB_KINDS } from '../../src/jobs'
import { insertJobs, type JobRow } from '../../src/services/job-store'
import type { JobStart } from '../../src/services/jobs'
import { storeBytes } from '../../src/services/sources'
import {
  api,
  fixtureBytes,
  inferenceStats,
  RAW_CUTOUT,
  releaseHeldAnswers,
  seedWorkspace,
  setInferenceMode,
  usage,
} from './helpers'

const MAX_ATTEMPTS = Number(env.INFERENCE_MAX_ATTEMPTS)
const CREDITS = 5
/** Far enough that a parked alarm never fires during a test. */
const PARKED_MS = 60 * 60_000
/** A real model run on two shared cores: generous, and never asserted on. */
const SLOW = 180_000

type Stub = DurableObjectStub<JobRun>

interface TestJob {
  id: string
  key: string
  workspaceId: string
  stub: Stub
  start: JobStart<'remove_background'>
}

/** The runner's own record (its `job` table): status, stage and the attempts spent. */
interface RunnerState {
  status: string
  stage: string
  attempts: number
  wrappedUp?: boolean
}

interface StoredEvent {
  type: string
  status: string
  stage: string
  error?: { code: string; message: string }
  /** Handed to the webhook outboxes (every type but progress, once terminal work is done). */
  published: boolean
}

afterEach(async () => {
  await setInferenceMode('normal')
  await releaseHeldAnswers()
})

/** Moves a scheduled alarm an hour away; returns when it was due (null: none was scheduled). */
async function park(state: DurableObjectState): Promise<number | null> {
  const due = await state.storage.getAlarm()
  if (due !== null) await state.storage.setAlarm(Date.now() + PARKED_MS)
  return due
}

/** A queued removal job with a credit held, whose runner is started but has not run yet. */
async function createJob(): Promise<TestJob> {
  const { key, workspaceId } = await seedWorkspace({ credits: CREDITS })
  const id = crypto.randomUUID()
  const source = await storeBytes(env.BUCKET, `sources/${id}`, await fixtureBytes('astronaut.png'), 'image')
  await insertJobs(
    env.DB,
    [{ id, workspaceId, kind: 'remove_background', options: RAW_CUTOUT, sourceKey: source.key, format: 'png' }],
    { hold: true },
  )
  const start: JobStart<'remove_background'> = {
    jobId: id,
    workspaceId,
    correlationId: `job-run-test-${id}`,
    kind: 'remove_background',
    input: { source: { key: source.key, size: source.size, sha256: source.sha256 }, options: RAW_CUTOUT },
  }
  const stub = env.JOB_RUN.get(env.JOB_RUN.idFromName(id))
  const firstRun = await runInDurableObject(stub, (run, state) =>
    state.blockConcurrencyWhile(async () => {
      await run.start(start)
      return park(state)
    }),
  )
  expect(firstRun, 'start() schedules the first run').not.toBeNull()
  return { id, key, workspaceId, stub, start }
}

/**
 * Runs the job's scheduled alarm now and parks whatever alarm that run scheduled, atomically.
 * Returns when the next run was due, or null when the run left nothing scheduled.
 */
async function step(stub: Stub): Promise<number | null> {
  const outcome = await runInDurableObject(stub, (run: JobRun, state) =>
    // Nothing thrown in here: a throw inside blockConcurrencyWhile resets the object.
    state.blockConcurrencyWhile(async () => {
      if ((await state.storage.getAlarm()) === null) return { ran: false, next: null }
      await state.storage.deleteAlarm()
      await run.alarm()
      return { ran: true, next: await park(state) }
    }),
  )
  expect(outcome.ran, 'a run was scheduled').toBe(true)
  return outcome.next
}

/** Delivers an alarm whether or not one is scheduled: what a late or duplicate alarm does. */
function staleAlarm(stub: Stub): Promise<void> {
  return runInDurableObject(stub, (run: JobRun) => run.alarm())
}

function scheduledAlarm(stub: Stub): Promise<number | null> {
  return runInDurableObject(stub, (_, state) => state.storage.getAlarm())
}

function runnerState(stub: Stub): Promise<RunnerState> {
  return runInDurableObject(stub, (_, state) => {
    const row = state.storage.sql.exec<{ state: string }>('SELECT state FROM job').one()
    return JSON.parse(row.state) as RunnerState
  })
}

function storedEvents(stub: Stub): Promise<StoredEvent[]> {
  return runInDurableObject(stub, (_, state) =>
    state.storage.sql
      .exec<{ body: string; published: number }>('SELECT body, published FROM events ORDER BY seq')
      .toArray()
      .map(({ body, published }) => {
        const event = JSON.parse(body) as { type: string; data: Omit<StoredEvent, 'type' | 'published'> }
        return { type: event.type, ...event.data, published: published === 1 }
      }),
  )
}

/** The event types the public SSE endpoint replays for a job (it closes once the job is terminal). */
async function sseTypes(job: TestJob): Promise<string[]> {
  const res = await api(`/v1/jobs/${job.id}/events`, { key: job.key })
  expect(res.status).toBe(200)
  return [...(await res.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1])
}

async function jobRow(id: string): Promise<JobRow> {
  const row = await env.DB.prepare('SELECT * FROM jobs WHERE id = ?').bind(id).first<JobRow>()
  if (!row) throw new Error(`no job row ${id}`)
  return row
}

async function holdStatus(id: string): Promise<string | null> {
  const row = await env.DB.prepare('SELECT status FROM credit_holds WHERE job_id = ?')
    .bind(id)
    .first<{ status: string }>()
  return row?.status ?? null
}

async function runningSlots(workspaceId: string): Promise<string[]> {
  return (await env.WORKSPACE.get(env.WORKSPACE.idFromName(workspaceId)).snapshot()).running
}

async function removeCalls(): Promise<number> {
  return (await inferenceStats()).removeCalls
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = SLOW): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * Stops the runner at one of the kind's hooks until `resume()`: `parts` after the sources are read
 * (before the inference call), `completed` after every output is stored (before the job succeeds).
 * The kind is the module's own object, shared with the runner in this isolate; `restore()` undoes it.
 * Both sides poll plain flags on their own timers: a promise resolved from the Durable Object would
 * carry the test's continuation into the object's I/O context (and the other way round).
 */
function pauseAt(hook: 'parts' | 'completed') {
  const kind = JOB_KINDS.remove_background
  const original = { parts: kind.parts, completed: kind.completed }
  const flags = { reached: false, resumed: false }
  const hold = async () => {
    flags.reached = true
    while (!flags.resumed) await new Promise((r) => setTimeout(r, 20))
  }
  if (hook === 'parts') {
    kind.parts = async (env, job) => {
      const parts = await original.parts(env, job)
      await hold()
      return parts
    }
  } else {
    kind.completed = hold
  }
  return {
    reached: () => until(`the runner is at ${hook}`, async () => flags.reached),
    resume() {
      flags.resumed = true
    },
    restore() {
      flags.resumed = true
      kind.parts = original.parts
      if (original.completed) kind.completed = original.completed
      else delete kind.completed
    },
  }
}

/** Every later call on an ended job changes nothing: no row, credit, event or result moves. */
async function expectSettled(job: TestJob, status: 'succeeded' | 'failed' | 'canceled') {
  const row = await jobRow(job.id)
  const credits = await usage(job.key)
  const events = await storedEvents(job.stub)
  const calls = await removeCalls()
  expect(await job.stub.cancel()).toBe(status)
  await staleAlarm(job.stub)
  await job.stub.start(job.start) // a retried start RPC
  expect(await runDurableObjectAlarm(job.stub), 'nothing is left scheduled').toBe(false)
  expect(await jobRow(job.id)).toEqual(row)
  expect(await usage(job.key)).toEqual(credits)
  expect(await storedEvents(job.stub)).toEqual(events)
  expect(await runnerState(job.stub)).toMatchObject({ status, wrappedUp: true })
  expect(await removeCalls()).toBe(calls)
  expect(await runningSlots(job.workspaceId)).toEqual([])
}

describe('JobRun retries', () => {
  it(
    'a server lost mid-call costs one attempt per run; the last attempt fails the job and releases its hold once',
    async () => {
      const job = await createJob()
      await setInferenceMode('die-on-remove') // also resets the proxy's call count
      expect(await usage(job.key)).toMatchObject({ held: 1, used: 0, available: CREDITS - 1 })

      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
        expect(await step(job.stub), `a retry is scheduled after attempt ${attempt}`).not.toBeNull()
        expect(await removeCalls()).toBe(attempt)
        expect(await runnerState(job.stub)).toMatchObject({
          status: 'processing',
          stage: 'preparing',
          attempts: attempt,
        })
        const row = await jobRow(job.id)
        expect(row).toMatchObject({ status: 'processing', stage: 'preparing', error_code: null, completed_at: null })
        expect(row.started_at).not.toBeNull()
        expect(await holdStatus(job.id)).toBe('held')
        expect(await usage(job.key)).toMatchObject({ held: 1, used: 0 })
      }

      expect(await step(job.stub), 'nothing is scheduled after the last attempt').toBeNull()
      expect(await removeCalls()).toBe(MAX_ATTEMPTS)
      const failed = await jobRow(job.id)
      expect(failed).toMatchObject({
        status: 'failed',
        stage: 'preparing',
        error_code: 'processor_unavailable',
        result_key: null,
        expires_at: null,
      })
      expect(failed.error_message).toContain(`after ${MAX_ATTEMPTS} attempts`)
      expect(failed.completed_at).not.toBeNull()
      expect(await holdStatus(job.id)).toBe('released')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 0, available: CREDITS })

      const events = await storedEvents(job.stub)
      expect(events.map((e) => `${e.type}:${e.status}:${e.stage}`)).toEqual([
        'image.job.created.v1:queued:queued',
        'image.job.progress.v1:processing:preparing',
        'image.job.failed.v1:failed:preparing',
      ])
      expect(events.at(-1)).toMatchObject({ error: { code: 'processor_unavailable' }, published: true })
      expect(await sseTypes(job)).toEqual(['image.job.created.v1', 'image.job.progress.v1', 'image.job.failed.v1'])

      await expectSettled(job, 'failed')
      expect(await holdStatus(job.id)).toBe('released')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 0, available: CREDITS })
    },
    SLOW,
  )

  it(
    'an unreachable server costs one attempt per run while the job stays queued, then fails it',
    async () => {
      const job = await createJob()
      await setInferenceMode('down')

      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
        expect(await step(job.stub)).not.toBeNull()
        // Readiness failed, so the job never started: it keeps its place (and slot) and its hold.
        expect(await runnerState(job.stub)).toMatchObject({ status: 'queued', stage: 'queued', attempts: attempt })
        expect(await jobRow(job.id)).toMatchObject({ status: 'queued', stage: 'queued', started_at: null })
        expect(await usage(job.key)).toMatchObject({ held: 1, used: 0 })
        expect(await runningSlots(job.workspaceId)).toEqual([job.id])
      }

      expect(await step(job.stub)).toBeNull()
      expect(await jobRow(job.id)).toMatchObject({
        status: 'failed',
        stage: 'queued',
        error_code: 'processor_unavailable',
        error_message: 'No inference server is available',
        started_at: null,
      })
      expect(await removeCalls()).toBe(0)
      expect(await holdStatus(job.id)).toBe('released')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 0, available: CREDITS })
      expect(await sseTypes(job)).toEqual(['image.job.created.v1', 'image.job.failed.v1'])
      await expectSettled(job, 'failed')
    },
    SLOW,
  )
})

describe('JobRun under saturation', () => {
  it(
    'runs against a saturated server spend no attempt; the first run with capacity completes the job and charges it',
    async () => {
      const job = await createJob()
      await setInferenceMode('saturated')

      // More runs than there are attempts: had any spent one, the job would have failed by now.
      for (let run = 1; run <= MAX_ATTEMPTS + 1; run++) {
        expect(await step(job.stub), 'the job waits for capacity').not.toBeNull()
        expect(await runnerState(job.stub)).toMatchObject({ status: 'queued', stage: 'queued', attempts: 0 })
        expect(await jobRow(job.id)).toMatchObject({ status: 'queued', stage: 'queued', started_at: null })
      }
      expect(await removeCalls()).toBe(0)
      expect(await usage(job.key)).toMatchObject({ held: 1, used: 0 })
      expect(await runningSlots(job.workspaceId)).toEqual([job.id])

      await setInferenceMode('normal')
      expect(await runDurableObjectAlarm(job.stub)).toBe(true)
      const done = await jobRow(job.id)
      expect(done).toMatchObject({
        status: 'succeeded',
        stage: 'complete',
        result_key: `results/${job.id}.png`,
        result_content_type: 'image/png',
        error_code: null,
      })
      expect(done.model_version).toBeTruthy()
      expect(done.started_at).not.toBeNull()
      expect(done.expires_at).not.toBeNull()
      expect(await removeCalls()).toBe(1)

      const stored = await env.BUCKET.get(`results/${job.id}.png`)
      expect(stored?.httpMetadata?.contentType).toBe('image/png')
      const bytes = new Uint8Array(await stored!.arrayBuffer())
      expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

      expect(await holdStatus(job.id)).toBe('charged')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 1, available: CREDITS - 1 })
      expect((await storedEvents(job.stub)).map((e) => `${e.type}:${e.stage}`)).toEqual([
        'image.job.created.v1:queued',
        'image.job.progress.v1:preparing',
        'image.job.progress.v1:segmenting',
        'image.job.progress.v1:refining',
        'image.job.progress.v1:rendering',
        'image.job.progress.v1:storing',
        'image.job.completed.v1:complete',
      ])
      expect(await scheduledAlarm(job.stub)).toBeNull()
      expect(await runningSlots(job.workspaceId)).toEqual([])
    },
    SLOW,
  )
})

describe('JobRun cancellation', () => {
  it(
    'cancel while queued ends the job at once, frees its slot and hold, and no later alarm revives it',
    async () => {
      const job = await createJob()
      await setInferenceMode('saturated')
      expect(await step(job.stub)).not.toBeNull() // waiting for capacity, holding a workspace slot
      expect(await runningSlots(job.workspaceId)).toEqual([job.id])

      expect(await job.stub.cancel()).toBe('canceled')
      const canceled = await jobRow(job.id)
      expect(canceled).toMatchObject({ status: 'canceled', stage: 'queued', error_code: null, result_key: null })
      expect(canceled.completed_at).not.toBeNull()
      expect(await holdStatus(job.id)).toBe('released')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 0, available: CREDITS })
      expect(await runningSlots(job.workspaceId)).toEqual([])
      expect(await scheduledAlarm(job.stub), 'cancel deletes the pending run').toBeNull()

      // Capacity is back, and an alarm is delivered anyway (late or duplicated): it changes nothing.
      await setInferenceMode('normal')
      await expectSettled(job, 'canceled')
      expect(await runnerState(job.stub)).toMatchObject({ status: 'canceled', stage: 'queued', attempts: 0 })
      expect(await removeCalls()).toBe(0)
      expect(await env.BUCKET.head(`results/${job.id}.png`)).toBeNull()
      expect((await storedEvents(job.stub)).map((e) => e.type)).toEqual([
        'image.job.created.v1',
        'image.job.canceled.v1',
      ])
    },
    SLOW,
  )

  it(
    'cancel while the inference call is in flight aborts it: canceled, hold released, no result stored',
    async () => {
      const job = await createJob()
      // The proxy forwards the answer's stage frames and holds its output and end until released.
      await setInferenceMode('hold-output')
      const run = runDurableObjectAlarm(job.stub)
      await until('the call is in flight with its output held', async () => {
        const { held } = await inferenceStats()
        return held === 1 && (await jobRow(job.id)).stage === 'rendering'
      })
      expect(await runnerState(job.stub)).toMatchObject({ status: 'processing', stage: 'rendering' })

      // In flight, cancel only aborts the call; the run it interrupts ends the job.
      expect(await job.stub.cancel()).toBe('processing')
      expect(await job.stub.waitForTerminal(SLOW / 2), 'ended without the held output').toBe(true)
      expect(await run).toBe(true)
      // Letting the held answer go now reaches no one.
      await releaseHeldAnswers()

      const canceled = await jobRow(job.id)
      expect(canceled).toMatchObject({
        status: 'canceled',
        stage: 'rendering',
        result_key: null,
        error_code: null,
        expires_at: null,
      })
      expect(await holdStatus(job.id)).toBe('released')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 0, available: CREDITS })
      expect(await env.BUCKET.head(`results/${job.id}.png`)).toBeNull()
      expect((await storedEvents(job.stub)).map((e) => `${e.type}:${e.stage}`)).toEqual([
        'image.job.created.v1:queued',
        'image.job.progress.v1:preparing',
        'image.job.progress.v1:segmenting',
        'image.job.progress.v1:refining',
        'image.job.progress.v1:rendering',
        'image.job.canceled.v1:rendering',
      ])
      const view = (await (await api(`/v1/jobs/${job.id}`, { key: job.key })).json()) as Record<string, unknown>
      expect(view).toMatchObject({ status: 'canceled', result: null })
      await expectSettled(job, 'canceled')
      expect(await env.BUCKET.head(`results/${job.id}.png`)).toBeNull()
    },
    SLOW,
  )
})

describe('JobRun cancellation between the steps of a run', () => {
  it(
    'cancel while the runner reads the sources ends the job before any inference call is made',
    async () => {
      const job = await createJob()
      const pause = pauseAt('parts')
      try {
        const run = runDurableObjectAlarm(job.stub)
        await pause.reached()
        expect(await jobRow(job.id)).toMatchObject({ status: 'processing', stage: 'preparing' })
        // Nothing is in flight yet, so the cancel ends the job itself.
        expect(await job.stub.cancel()).toBe('canceled')
        pause.resume()
        expect(await run).toBe(true)
      } finally {
        pause.restore()
      }
      expect(await removeCalls(), 'no inference call for a canceled job').toBe(0)
      expect(await jobRow(job.id)).toMatchObject({ status: 'canceled', stage: 'preparing', result_key: null })
      expect(await holdStatus(job.id)).toBe('released')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 0, available: CREDITS })
      expect((await storedEvents(job.stub)).map((e) => `${e.type}:${e.stage}`)).toEqual([
        'image.job.created.v1:queued',
        'image.job.progress.v1:preparing',
        'image.job.canceled.v1:preparing',
      ])
      await expectSettled(job, 'canceled')
    },
    SLOW,
  )

  it(
    'cancel after the output is stored but before the job succeeds: canceled, not charged, no result link',
    async () => {
      const job = await createJob()
      await setInferenceMode('normal') // resets the call count
      const pause = pauseAt('completed')
      try {
        const run = runDurableObjectAlarm(job.stub)
        await pause.reached()
        expect(await jobRow(job.id)).toMatchObject({ status: 'processing', stage: 'storing' })
        expect(await env.BUCKET.head(`results/${job.id}.png`), 'the output is stored').not.toBeNull()
        expect(await job.stub.cancel()).toBe('canceled')
        pause.resume()
        expect(await run).toBe(true)
      } finally {
        pause.restore()
      }
      expect(await removeCalls()).toBe(1)
      const canceled = await jobRow(job.id)
      expect(canceled).toMatchObject({
        status: 'canceled',
        stage: 'storing',
        result_key: null,
        result_content_type: null,
        expires_at: null,
      })
      expect(await holdStatus(job.id)).toBe('released')
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 0, available: CREDITS })
      const types = (await storedEvents(job.stub)).map((e) => e.type)
      expect(types.at(-1)).toBe('image.job.canceled.v1')
      expect(types).not.toContain('image.job.completed.v1')
      const view = (await (await api(`/v1/jobs/${job.id}`, { key: job.key })).json()) as Record<string, unknown>
      expect(view).toMatchObject({ status: 'canceled', result: null })
      expect((await api(`/v1/jobs/${job.id}/result`, { key: job.key })).status).toBe(404)
      // The bytes stored before the cancel stay under results/<id>.png with no job pointing at them:
      // the retention sweep only follows result_key, so only the R2 lifecycle rule removes them.
      expect(await env.BUCKET.head(`results/${job.id}.png`)).not.toBeNull()
      await expectSettled(job, 'canceled')
    },
    SLOW,
  )
})

describe('JobRun terminal states', () => {
  it(
    'a succeeded job stays succeeded: cancel returns succeeded and the row, credits, events and result stay',
    async () => {
      const job = await createJob()
      expect(await runDurableObjectAlarm(job.stub)).toBe(true)
      const done = await jobRow(job.id)
      expect(done).toMatchObject({ status: 'succeeded', stage: 'complete', result_key: `results/${job.id}.png` })
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 1 })

      await expectSettled(job, 'succeeded')
      expect(await holdStatus(job.id)).toBe('charged')
      expect(await env.BUCKET.head(`results/${job.id}.png`)).not.toBeNull()

      // Through the API too: DELETE on a finished job answers the job as it is.
      const res = await api(`/v1/jobs/${job.id}`, { method: 'DELETE', key: job.key })
      expect(res.status).toBe(200)
      const view = (await res.json()) as { status: string; result: { url: string } | null }
      expect(view.status).toBe('succeeded')
      expect(view.result?.url).toBeTruthy()
      expect(await jobRow(job.id)).toEqual(done)
      expect(await usage(job.key)).toMatchObject({ held: 0, used: 1, available: CREDITS - 1 })
    },
    SLOW,
  )
})
