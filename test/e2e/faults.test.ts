/**
 * Faults of the inference server under `npm start`, end to end against the real model (issue 15
 * items 1 and 2): killed mid-job, it is restarted by the supervisor while the Worker stays up, and
 * the job in flight succeeds on a retry; frozen mid-job (SIGSTOP), the call is aborted at its
 * deadline and the job fails `processor_unavailable` with its hold released, readiness says
 * unavailable and new jobs are refused, until SIGCONT. Last, `npm start` stops both servers on
 * SIGTERM.
 *
 * On the e2e stage's shared stack, as the stage's last file (test/helpers/last-files.ts): it ends
 * the stack. The stack's deadlines and backoffs are shortened (test/helpers/e2e-stack.ts) so the
 * frozen case ends in under 45 s: a call may take 20 s + 2 s per megapixel (the 0.26 MP photo
 * counts as one), a readiness check 1 s, and the retries' backoffs start at 0.5 s.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { beforeAll, describe, expect, it } from 'vitest'
import { MALLOC_ENV } from '../../inference-server/src/segmentation/session-memory'
import { TERMINAL_STATUSES } from '../../src/contract/stages'
import { E2E_STACK_ENV, e2eStack } from '../helpers/e2e-stack'
import { processesUsing } from '../helpers/local-stack'
import type { SharedStack } from '../helpers/shared-stack'
import { reachedStage } from '../helpers/job-stage'

const PNG = readFileSync(new URL('../fixtures/astronaut.png', import.meta.url))
const OPTIONS = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
/** A setting of the stack's Worker (test/helpers/e2e-stack.ts). */
const env = (name: keyof typeof E2E_STACK_ENV) => Number(E2E_STACK_ENV[name])
/** The stack's deadline for this photo's call: base + per-MP × 1 MP (the 0.26 MP photo counts as one). */
const DEADLINE_MS = env('INFERENCE_DEADLINE_BASE_MS') + env('INFERENCE_DEADLINE_PER_MP_MS')
/**
 * After the deadline: up to 5 more attempts, each a readiness check and a backoff of base × 2^k,
 * or longer where a server's retry hint asks more (a server that does not answer hints 5 s), up to
 * the stack's cap on hints.
 */
const RETRIES_MS = [1, 2, 4, 8, 16].reduce(
  (sum, doubling) =>
    sum +
    env('INFERENCE_READY_TIMEOUT_MS') +
    Math.max(doubling * env('INFERENCE_RETRY_BASE_MS'), env('INFERENCE_RETRY_AFTER_MAX_MS')),
  0,
)
/** Generous, for a machine four times slower and busy; a stuck job fails with its state. */
const JOB_TIMEOUT_MS = 150_000
const TERMINAL: readonly string[] = TERMINAL_STATUSES

let stack: SharedStack
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(() => {
  stack = e2eStack()
})

/** What `npm start` printed so far. */
const output = () => readFileSync(stack.outputFile, 'utf8')

function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  headers.set('Authorization', `Bearer ${stack.apiKey}`)
  return fetch(new URL(path, stack.baseUrl), { ...init, headers })
}

function submit(): Promise<Response> {
  const form = new FormData()
  form.append('image', new Blob([PNG], { type: 'image/png' }), 'astronaut.png')
  form.append('options', JSON.stringify(OPTIONS))
  return api('/v1/removals', { method: 'POST', headers: { 'Idempotency-Key': randomUUID() }, body: form })
}

async function finalJob(jobId: string) {
  const deadline = Date.now() + JOB_TIMEOUT_MS
  for (;;) {
    const job = (await (await api(`/v1/jobs/${jobId}`)).json()) as {
      status: string
      completedAt: string | null
      error: { code: string } | null
    }
    if (TERMINAL.includes(job.status)) return job
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status}: ${JSON.stringify(job)}`)
    // A quarter second: the job's end is seen soon after it happens, and the stack's rate window
    // (workspace 120 per 5 s, test/helpers/local-stack.ts) is far away.
    await sleep(250)
  }
}

/** The pid of the inference server's current run, as `npm start` logs it. */
function inferencePid(): number {
  const pids = [...output().matchAll(/inference server started \(pid (\d+)\)/g)]
  if (!pids.length) throw new Error(`no inference pid logged:\n${output()}`)
  return Number(pids.at(-1)![1])
}

async function usage() {
  return (await (await api('/v1/usage')).json()) as { held: number; used: number }
}

describe('npm start supervises the inference server', () => {
  it("starts it with glibc's malloc setting, so it does not warn of it", () => {
    const environ = readFileSync(`/proc/${inferencePid()}/environ`, 'utf8').split('\0')
    for (const [name, value] of Object.entries(MALLOC_ENV)) expect(environ).toContain(`${name}=${value}`)
    expect(output()).not.toMatch(/MALLOC_MMAP_THRESHOLD_ is not set/)
  })

  it('restarts it when it dies mid-job; the Worker stays up and the job in flight succeeds', async () => {
    const res = await submit()
    expect(res.status).toBe(202)
    const job = (await res.json()) as { id: string }
    await reachedStage(api, job.id, 'segmenting')
    const killed = inferencePid()
    process.kill(killed, 'SIGKILL')

    const final = await finalJob(job.id)
    expect(final, JSON.stringify(final)).toMatchObject({ status: 'succeeded', error: null })
    expect(output()).toMatch(/\[start\] inference server exited with code 137; restarting in \d+\.\d s/)
    expect(output()).toMatch(/\[start\] inference server is back: ready/)
    expect(inferencePid()).not.toBe(killed)
    expect((await fetch(new URL('/health/ready', stack.baseUrl))).status).toBe(200)
    expect((await usage()).held).toBe(0)
  })
})

describe('a frozen inference server (SIGSTOP)', () => {
  it('fails the job in flight at its deadline with its hold released, and refuses new jobs', async () => {
    const before = await usage()
    const res = await submit()
    expect(res.status).toBe(202)
    const job = (await res.json()) as { id: string }
    await reachedStage(api, job.id, 'segmenting')
    const frozen = inferencePid()
    process.kill(frozen, 'SIGSTOP')
    const frozenAt = Date.now()
    try {
      const ready = await fetch(new URL('/health/ready', stack.baseUrl))
      expect(ready.status).toBe(503)
      expect(await ready.json()).toMatchObject({ checks: { inference: 'unavailable' } })
      const refused = await submit()
      expect(refused.status).toBe(503)
      expect(refused.headers.get('retry-after')).toBeTruthy()

      const final = await finalJob(job.id)
      expect(final, JSON.stringify(final)).toMatchObject({ status: 'failed', error: { code: 'processor_unavailable' } })
      // Before deadlines the job stayed `processing` for as long as the server hung.
      const endedAfter = Date.parse(final.completedAt!) - frozenAt
      expect(endedAfter).toBeLessThan(DEADLINE_MS + RETRIES_MS + 10_000)
      expect(await usage()).toMatchObject({ held: 0, used: before.used })
    } finally {
      process.kill(frozen, 'SIGCONT')
    }
    // Thawed, the same server takes work again.
    const deadline = Date.now() + 30_000
    while ((await fetch(new URL('/health/ready', stack.baseUrl))).status !== 200 && Date.now() < deadline) {
      await sleep(500)
    }
    const again = (await (await submit()).json()) as { id: string }
    expect((await finalJob(again.id)).status).toBe('succeeded')
    expect((await usage()).held).toBe(0)
  })
})

/** Whether a process `pid` is there (signal 0 checks without sending anything). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

describe('npm start (local mode)', () => {
  it('stops both servers on SIGTERM and exits', async () => {
    const { pid, ports, stateDir } = stack
    expect(await portOpen(ports.edge)).toBe(true)
    expect(await portOpen(ports.inference)).toBe(true)
    const stoppedAt = Date.now()
    process.kill(pid, 'SIGTERM') // the npm process itself, as a supervisor would
    const deadline = stoppedAt + 15_000
    while (Date.now() < deadline && !/^\[start\] stopped$/m.test(output())) await sleep(200)
    expect(output(), output().split('\n').slice(-40).join('\n')).toMatch(/^\[start\] stopped$/m)
    // npm start is vitest's main process's child (the stage's globalSetup), which reaps it once it exits.
    while (Date.now() < deadline && running(pid)) await sleep(100)
    expect(running(pid), 'npm start exited').toBe(false)
    expect(Date.now() - stoppedAt).toBeLessThan(15_000)
    expect(await portOpen(ports.edge)).toBe(false)
    expect(await portOpen(ports.inference)).toBe(false)
    expect(processesUsing(stateDir)).toEqual([])
  })
})
