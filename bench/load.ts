/**
 * `npm run bench -- load` (issue 15 item 6): load on the running stack (the real inference server and
 * `wrangler dev`, started here on their own ports and state) from autocannon on 127.0.0.1. Each
 * stage runs four classes side by side for `--seconds`: removals of small images (multipart, a
 * fresh Idempotency-Key each), job reads, SSE streams (of finished jobs: the replay, then the
 * close) and result downloads; the read classes get a quarter of the stage's connections each,
 * removals arrive at `--removal-rate` per second (more than the model can run, so the inference
 * server saturates and jobs queue). Concurrency rises stage by stage; the stage where throughput
 * stops growing is reported as saturation.
 *
 * The rule checked: no 5xx but 503 with Retry-After. After the run every job must end terminal
 * and `held` must return to 0 (read through the API: each job, then /v1/usage).
 * Writes bench/results/load-<name>.json. The per-workspace rate limit is raised for the run
 * (it would otherwise answer 429 to nearly everything and measure only itself).
 *
 * Flags: --stages 4,8,16,32,64,128 --seconds 10 --removal-rate 1 --name latest --verbose
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { TERMINAL_STATUSES } from '../src/contract/stages.js'
import { sharp } from './lib/deps.js'
import { type ClassResult, type LoadClass, removalForm, runClass } from './lib/load.js'
import { startApi, startInference } from './lib/stack.js'
import { machineInfo, RESULTS_DIR, sleep } from './lib/util.js'

const { values: flags } = parseArgs({
  options: {
    stages: { type: 'string', default: '4,8,16,32,64,128' },
    seconds: { type: 'string', default: '10' },
    'removal-rate': { type: 'string', default: '1' },
    name: { type: 'string', default: 'latest' },
    verbose: { type: 'boolean', default: false },
  },
})
const stages = flags.stages.split(',').map(Number)
const seconds = Number(flags.seconds)
const removalRate = Number(flags['removal-rate'])
const log = (msg: string) => process.stderr.write(`${msg}\n`)
const OPTIONS = { quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
const TERMINAL: readonly string[] = TERMINAL_STATUSES
const DRAIN_TIMEOUT_MS = 30 * 60_000

const startedAt = Date.now()
const machine = machineInfo()
const inference = await startInference({}, flags.verbose)
const api = await startApi(inference, { vars: { RATE_LIMIT_PER_MINUTE: '1000000' }, verbose: flags.verbose })
const call = (path: string, init: RequestInit = {}) =>
  fetch(`${api.url}${path}`, { ...init, headers: { authorization: `Bearer ${api.apiKey}`, ...init.headers } })

try {
  // A small photo: 256×256, what a thumbnail or an avatar cut-out sends.
  const image = new Uint8Array(
    await sharp(`${process.cwd()}/bench/fixtures/astronaut.png`).resize(256).png().toBuffer(),
  )
  const form = removalForm(image, 'image/png', OPTIONS)
  const jobIds = new Set<string>()
  const seeded = await seedJobs(form, 3)
  for (const id of seeded) jobIds.add(id)
  log(`seeded ${seeded.length} finished jobs for reads, streams and downloads`)

  let turn = 0
  const pick = () => seeded[turn++ % seeded.length]
  const results: Array<{ concurrency: number; classes: ClassResult[]; throughput: number }> = []
  for (const concurrency of stages) {
    const quarter = Math.max(1, Math.floor(concurrency / 4))
    const classes: LoadClass[] = [
      {
        name: 'removals',
        connections: quarter,
        rate: removalRate,
        method: 'POST',
        path: () => '/v1/removals',
        headers: { 'content-type': form.type },
        body: form.body,
        idempotent: true,
        onBody: (status, body) => {
          if (status === 202 || status === 200) jobIds.add((JSON.parse(body) as { id: string }).id)
        },
      },
      { name: 'jobReads', connections: quarter, method: 'GET', path: () => `/v1/jobs/${pick()}` },
      { name: 'sseStreams', connections: quarter, method: 'GET', path: () => `/v1/jobs/${pick()}/events` },
      { name: 'downloads', connections: quarter, method: 'GET', path: () => `/v1/jobs/${pick()}/result` },
    ]
    const stage = await Promise.all(classes.map((cls) => runClass(api.url, api.apiKey, cls, seconds)))
    const throughput = Math.round(stage.reduce((sum, c) => sum + c.throughput, 0) * 10) / 10
    results.push({ concurrency, classes: stage, throughput })
    log(
      `c=${concurrency}: ${throughput} req/s; ${stage
        .map(
          (c) =>
            `${c.name} p50 ${c.latencyMs.p50} p95 ${c.latencyMs.p95} p99 ${c.latencyMs.p99} ms ${JSON.stringify(c.statuses)}`,
        )
        .join('; ')}`,
    )
  }

  log(`waiting for every job to end (${jobIds.size} accepted answers read)…`)
  const drainStarted = Date.now()
  const jobs = await drain()
  const usage = (await (await call('/v1/usage')).json()) as { held: number; used: number }
  const byStatus: Record<string, number> = {}
  for (const job of jobs) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1
  const bad5xx = results.reduce((sum, s) => sum + s.classes.reduce((n, c) => n + c.bad5xx, 0), 0)
  const allTerminal = jobs.every((j) => TERMINAL.includes(j.status))
  const report = {
    name: flags.name,
    date: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt) / 1000),
    machine,
    note:
      'A 2-core machine shared with other work: the absolute numbers move with its load; compare stages within a run. ' +
      'One inference server (concurrency 1, queue 8, the CPU model) and one wrangler dev (workerd, local D1/R2/DOs).',
    method: {
      tool: 'autocannon 9 on 127.0.0.1, latencies and statuses recorded per response',
      secondsPerStage: seconds,
      removalRatePerSecond: removalRate,
      removal: { image: 'astronaut.png resized to 256×256 PNG', options: OPTIONS },
      reads: 'GET /v1/jobs/{id}, GET /v1/jobs/{id}/events (finished jobs), GET /v1/jobs/{id}/result (with the key)',
      rateLimitPerMinute: 1_000_000,
    },
    stages: results,
    saturation: saturationOf(results),
    after: {
      jobs: jobs.length,
      acceptedAnswersRead: jobIds.size,
      byStatus,
      allTerminal,
      drainSeconds: Math.round((Date.now() - drainStarted) / 1000),
      usage,
    },
    verdict: { no5xxButRetryable503: bad5xx === 0, allTerminal, heldZero: usage.held === 0 },
  }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const out = `${RESULTS_DIR}load-${flags.name}.json`
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  log(`wrote ${out}: ${JSON.stringify(report.verdict)}; saturation ${JSON.stringify(report.saturation)}`)
  if (!Object.values(report.verdict).every(Boolean)) process.exitCode = 1
} finally {
  await api.stop()
  await inference.stop()
}

/** `n` removals run to the end one by one, for the read classes to read. */
async function seedJobs(form: { body: Buffer; type: string }, n: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const res = await call('/v1/removals', {
      method: 'POST',
      headers: { 'content-type': form.type, 'idempotency-key': crypto.randomUUID(), prefer: 'wait=8' },
      body: form.body,
    })
    if (res.status !== 200 && res.status !== 202) throw new Error(`seed removal: ${res.status} ${await res.text()}`)
    ids.push(((await res.json()) as { id: string }).id)
  }
  await drain()
  return ids
}

/** Every job of the workspace, read through `GET /v1/jobs` page by page. */
async function listAll(): Promise<Array<{ id: string; status: string }>> {
  const jobs: Array<{ id: string; status: string }> = []
  let cursor: string | null = null
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
    const page = (await (await call(`/v1/jobs?limit=100${query}`)).json()) as {
      jobs: Array<{ id: string; status: string }>
      nextCursor: string | null
    }
    jobs.push(...page.jobs)
    cursor = page.nextCursor
  } while (cursor)
  return jobs
}

/**
 * Waits until every job of the workspace is terminal (or the drain time is up) and returns them.
 * The listing, not the ids the load saw: a removal cut off at a stage's end may have been accepted
 * without its answer being read.
 */
async function drain(): Promise<Array<{ id: string; status: string }>> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS
  for (;;) {
    const jobs = await listAll()
    if (jobs.every((j) => TERMINAL.includes(j.status)) || Date.now() > deadline) return jobs
    await sleep(2000)
  }
}

/** The first stage whose throughput grew by less than 10 % over the one before (null: none did). */
function saturationOf(results: Array<{ concurrency: number; throughput: number }>) {
  for (let i = 1; i < results.length; i++) {
    if (results[i].throughput < results[i - 1].throughput * 1.1) {
      return { concurrency: results[i].concurrency, peakThroughput: Math.max(...results.map((r) => r.throughput)) }
    }
  }
  return null
}
