/**
 * README's "Walkthrough with curl" works as printed when the removal is slow (issue 43 item 2).
 * The block under the marker in README.md is run, as printed (the key and base URL filled in), by
 * a POSIX shell in the repository root, with the inference server stalled past `Prefer: wait=8`,
 * so the removal answers 202 with the job still running: the walkthrough must wait for the job and
 * end with the photo's cutout, a real PNG. When the job fails it must exit non-zero and save
 * nothing, not the HTML home page under a .png name (what the old walkthrough did: its last curl
 * fetched `$BASE` once `result.url` was missing).
 *
 * The stall is the fault tests' (test/e2e/faults.test.ts): the stack's inference server is
 * SIGSTOPped once the job is segmenting and SIGCONTed later. The test proxy's modes
 * (test/helpers/inference-proxy.ts) would do the same, but no proxy stands between the e2e stack's
 * Worker and its inference server (its INFERENCE_URL is fixed when `npm start` starts it).
 * Thawed before the deadline (20 s + 2 s per megapixel, test/helpers/e2e-stack.ts), the call goes
 * on and the job succeeds. The other branch (a job that ends without a cutout) is taken by
 * canceling the frozen job: the walkthrough reads a failed and a canceled job the same way (any
 * status but `succeeded`), and a cancel ends it at once, where letting the frozen call meet its
 * deadline and retries cost ~40 s of the suite (the fault tests cover that failure).
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, expect, it } from 'vitest'
import { TERMINAL_STATUSES } from '../../src/contract/stages'
import { e2eStack } from '../helpers/e2e-stack'
import type { SharedStack } from '../helpers/shared-stack'
import { reachedStage } from '../helpers/job-stage'

const sharp = createRequire(new URL('../../inference-server/package.json', import.meta.url))(
  'sharp',
) as typeof import('sharp').default

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '')
const README = join(ROOT, 'README.md')
const CUTOUT = join(ROOT, 'out', 'cutout.png')
/** Marks, in README.md, the shell block this test runs: the next ```sh block after it. */
const MARKER = '<!-- test/e2e/readme-walkthrough.test.ts runs the next block as printed -->'
/** What the block says in place of the key and the base URL. */
const KEY_PLACEHOLDER = 'KEY=sk_live_…'
const BASE_PLACEHOLDER = 'BASE=http://127.0.0.1:8787'
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** The removal's bounded wait in the walkthrough (`Prefer: wait=8`). */
const WAIT_MS = 8_000
/** How long the inference server stays frozen in the slow case: past the wait, well inside the call's deadline. */
const FREEZE_MS = 12_000
/** Generous, for a busy box; a walkthrough or job that takes longer fails with what it printed. */
const RUN_TIMEOUT_MS = 200_000
const TERMINAL: readonly string[] = TERMINAL_STATUSES

interface Job {
  id: string
  status: string
  createdAt: string
  completedAt: string | null
  error: { code: string } | null
}

let stack: SharedStack
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(() => {
  stack = e2eStack()
})

function api(path: string, method = 'GET'): Promise<Response> {
  return fetch(new URL(path, stack.baseUrl), { method, headers: { Authorization: `Bearer ${stack.apiKey}` } })
}

/** The shell block under MARKER in README.md, with the stack's key and base URL filled in. */
function walkthrough(): string {
  const readme = readFileSync(README, 'utf8')
  const at = readme.indexOf(MARKER)
  expect(at, `README.md has no ${MARKER}`).toBeGreaterThan(-1)
  const block = /^\s*```sh\n([\s\S]*?)\n```/.exec(readme.slice(at + MARKER.length))?.[1]
  expect(block, 'a ```sh block right under the marker').toBeDefined()
  const script = block as string
  expect(script).toContain(KEY_PLACEHOLDER)
  expect(script).toContain(BASE_PLACEHOLDER)
  return script.replace(KEY_PLACEHOLDER, `KEY=${stack.apiKey}`).replace(BASE_PLACEHOLDER, `BASE=${stack.baseUrl}`)
}

/** Runs `script` in one `sh` (as pasted into a terminal); its exit status is its last command's. */
function runInShell(script: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const shell = spawn('sh', ['-c', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    shell.stdout.on('data', (d) => (output += d))
    shell.stderr.on('data', (d) => (output += d))
    shell.once('error', reject)
    shell.once('exit', (code) => resolve({ code, output }))
  })
}

/** The ids of the workspace's newest jobs. */
async function newestJobIds(): Promise<string[]> {
  const res = await api('/v1/jobs?limit=10')
  expect(res.status).toBe(200)
  return ((await res.json()) as { jobs: Job[] }).jobs.map((job) => job.id)
}

/** The first job that is not in `before`: the walkthrough's removal. */
async function nextJob(before: string[]): Promise<string> {
  const deadline = Date.now() + RUN_TIMEOUT_MS
  for (;;) {
    const fresh = (await newestJobIds()).find((id) => !before.includes(id))
    if (fresh) return fresh
    if (Date.now() > deadline) throw new Error('the walkthrough created no job')
    await sleep(100)
  }
}

async function finalJob(jobId: string): Promise<Job> {
  const deadline = Date.now() + RUN_TIMEOUT_MS
  for (;;) {
    const job = (await (await api(`/v1/jobs/${jobId}`)).json()) as Job
    if (TERMINAL.includes(job.status)) return job
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status}: ${JSON.stringify(job)}`)
    await sleep(500)
  }
}

/** The pid of the inference server's current run, as `npm start` logs it. */
function inferencePid(): number {
  const output = readFileSync(stack.outputFile, 'utf8')
  const pids = [...output.matchAll(/inference server started \(pid (\d+)\)/g)]
  if (!pids.length) throw new Error(`no inference pid logged:\n${output}`)
  return Number(pids.at(-1)![1])
}

async function inferenceReady(): Promise<void> {
  const deadline = Date.now() + 30_000
  while ((await fetch(new URL('/health/ready', stack.baseUrl))).status !== 200) {
    if (Date.now() > deadline) throw new Error('the inference server did not come back after SIGCONT')
    await sleep(500)
  }
}

/**
 * Runs the walkthrough while the inference server is frozen from the moment the walkthrough's job
 * is segmenting until `thaw(jobId)` resolves; the server is always thawed before this returns.
 */
async function runStalled(thaw: (jobId: string) => Promise<unknown>) {
  await inferenceReady()
  rmSync(CUTOUT, { force: true })
  const before = await newestJobIds()
  const run = runInShell(walkthrough())
  let frozen: number | undefined
  try {
    const jobId = await nextJob(before)
    await reachedStage(api, jobId, 'segmenting')
    frozen = inferencePid()
    process.kill(frozen, 'SIGSTOP')
    await thaw(jobId)
    process.kill(frozen, 'SIGCONT')
    frozen = undefined
    const { code, output } = await run
    return { code, output, job: await finalJob(jobId) }
  } finally {
    if (frozen !== undefined) process.kill(frozen, 'SIGCONT')
    await inferenceReady()
  }
}

it('waits for a removal slower than Prefer: wait=8 and saves its cutout as a PNG', {
  timeout: 300_000,
}, async () => {
  const { code, output, job } = await runStalled(() => sleep(FREEZE_MS))
  // The stall worked: the removal outlasted the walkthrough's bounded wait.
  expect(job, JSON.stringify(job)).toMatchObject({ status: 'succeeded', error: null })
  expect(Date.parse(job.completedAt!) - Date.parse(job.createdAt), JSON.stringify(job)).toBeGreaterThan(WAIT_MS)

  expect(code, output).toBe(0)
  expect(existsSync(CUTOUT), output).toBe(true)
  const bytes = readFileSync(CUTOUT)
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE), `not a PNG: ${bytes.subarray(0, 64).toString()}`).toBe(true)
  const meta = await sharp(bytes).metadata()
  expect(meta.format).toBe('png')
  expect(meta.hasAlpha).toBe(true)
  // examples/photo.jpg is 512×512; the cutout keeps the photo's size.
  expect([meta.width, meta.height]).toEqual([512, 512])
})

it('exits non-zero and saves nothing when the job ends without a cutout', { timeout: 300_000 }, async () => {
  // Canceled while its server is frozen: the walkthrough's polling sees a status other than succeeded.
  const { code, output, job } = await runStalled(async (jobId) => {
    expect((await api(`/v1/jobs/${jobId}`, 'DELETE')).status).toBe(200)
    return finalJob(jobId)
  })
  expect(job, JSON.stringify(job)).toMatchObject({ status: 'canceled' })

  expect(code, output).not.toBe(0)
  expect(output).toContain('job canceled')
  expect(existsSync(CUTOUT), existsSync(CUTOUT) ? readFileSync(CUTOUT).subarray(0, 200).toString() : '').toBe(false)
})
