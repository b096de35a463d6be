/**
 * `npm run bench -- fleet` (issue 26.3): the Worker in front of a fleet of inference servers, as
 * `INFERENCE_URL` with several entries. Each server (the real model, one intra-op thread, so three
 * fit on the machine) sits behind a transparent counting proxy on 127.0.0.1, which records every
 * `/v1/*` call it forwards and when, so the bench sees where the Worker sent each job without
 * touching either side. Three runs of the same removals (`wrangler dev`, local state):
 *   one         one server: the baseline throughput;
 *   three       three servers: throughput and jobs per server;
 *   three-fault three servers, one SIGKILLed and another SIGSTOPped (frozen) once the work is
 *               under way; the frozen one is resumed after every job has ended.
 * Each run ends with the invariants: every job terminal, held credits back to 0, and (fault run)
 * no call reached the killed or the frozen server after its fault plus the readiness timeout
 * (calls already on their way may arrive within it). Writes bench/results/fleet-<name>.json.
 * On this 2-core machine three servers cannot be faster than one by much: they share two cores.
 *
 * Flags: --name latest --jobs 12 --size 512 --verbose
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { TERMINAL_STATUSES } from '../src/contract/stages'
import { sharp } from './lib/deps.js'
import { type ApiStack, type InferenceServer, startApi, startInference } from './lib/stack.js'
import { freePort, machineInfo, RESULTS_DIR, ROOT, round, sleep, until } from './lib/util.js'

const { values: flags } = parseArgs({
  options: {
    name: { type: 'string', default: 'latest' },
    jobs: { type: 'string', default: '12' },
    size: { type: 'string', default: '512' },
    verbose: { type: 'boolean', default: false },
  },
})
const log = (msg: string) => process.stderr.write(`${msg}\n`)
const JOBS = Number(flags.jobs)
const OPTIONS = { quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
/** The Worker's readiness timeout here (production: 5 s); a frozen server costs each probe this. */
const READY_TIMEOUT_MS = 2000
/** How long a run may wait for its jobs (a frozen server's calls end at their deadline). */
const WAIT_MS = 10 * 60_000
const VARS = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  WORKSPACE_SLOT_LIMIT: '6',
  INFERENCE_READY_TIMEOUT_MS: String(READY_TIMEOUT_MS),
}

type Job = { id: string; status: string; stage: string; error: { code: string } | null }
const isTerminal = (job: Job) => (TERMINAL_STATUSES as readonly string[]).includes(job.status)

/** A transparent proxy in front of one server, logging each `/v1/*` call it forwards. */
interface CountingProxy {
  url: string
  /** `ended`: the answer was read to its end (a streamed call is in flight until then). */
  calls: { path: string; at: number; status: number | 'error'; ended: boolean }[]
  close(): Promise<void>
}

async function countingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target)
  const calls: CountingProxy['calls'] = []
  const server: Server = createServer((req, res) => {
    const call = { path: req.url ?? '', at: Date.now(), status: 'error' as number | 'error', ended: false }
    if (call.path.startsWith('/v1/')) calls.push(call)
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        call.status = answer.statusCode ?? 0
        answer.on('end', () => {
          call.ended = true
        })
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    // A dead server is a refused or reset connection for the Worker too, not a proxy's 502.
    forward.on('error', () => res.destroy())
    req.pipe(forward)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

interface Member {
  inference: InferenceServer
  proxy: CountingProxy
}

async function startFleet(size: number): Promise<Member[]> {
  const members: Member[] = []
  // One at a time: three model loads at once on two cores time each other out.
  for (let i = 0; i < size; i++) {
    // Every server of a fleet shares the Worker's signing key (INFERENCE_SIGNING_KEY).
    const shared = members[0] && { port: await freePort(), signingKey: members[0].inference.signingKey }
    const inference = await startInference({ INFERENCE_THREADS: '1' }, flags.verbose, shared)
    members.push({ inference, proxy: await countingProxy(inference.url) })
  }
  return members
}

async function stopFleet(members: Member[]): Promise<void> {
  for (const m of members) {
    try {
      process.kill(m.inference.child.proc.pid as number, 'SIGCONT')
    } catch {}
    await m.inference.stop()
    await m.proxy.close()
  }
}

function client(api: ApiStack) {
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${api.url}${path}`, { ...init, headers: { authorization: `Bearer ${api.apiKey}`, ...init.headers } })
  const json = async <T>(res: Response): Promise<T> => {
    if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`)
    return (await res.json()) as T
  }
  return { call, json }
}

/**
 * One run: `JOBS` removals of one upload through a fresh `wrangler dev` in front of `members`;
 * `fault` (if any) runs once the first job reaches the model.
 */
async function runFleet(
  name: string,
  members: Member[],
  image: Uint8Array,
  fault?: (members: Member[]) => Promise<Record<string, number>>,
) {
  log(`— ${name}: ${members.length} server(s), ${JOBS} jobs`)
  for (const m of members) m.proxy.calls.length = 0
  const api = await startApi(members[0].inference, {
    vars: { ...VARS, INFERENCE_URL: members.map((m) => m.proxy.url).join(',') },
    verbose: flags.verbose,
  })
  const { call, json } = client(api)
  try {
    const created = await json<{ id: string; uploadUrl: string }>(await call('/v1/uploads', { method: 'POST' }))
    const put = await call(created.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: image })
    if (put.status !== 204) throw new Error(`PUT: ${put.status}`)
    await json(await call(`/v1/uploads/${created.id}/complete`, { method: 'POST' }))

    const started = Date.now()
    const ids: string[] = []
    for (let i = 0; i < JOBS; i++) {
      const job = await json<Job>(
        await call('/v1/removals', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': crypto.randomUUID(),
            prefer: 'respond-async',
          },
          body: JSON.stringify({ uploadId: created.id, options: OPTIONS }),
        }),
      )
      ids.push(job.id)
    }
    let faults: Record<string, number> = {}
    if (fault) {
      // Fault servers that have work: wait until servers 2 and 3 have each been sent a job.
      const hasWork = (m: Member) => m.proxy.calls.some((c) => c.path === '/v1/remove')
      await until(async () => hasWork(members[1]) && hasWork(members[2]), 'servers 2 and 3 to be sent jobs', WAIT_MS)
      const inFlight = members.map((m) => m.proxy.calls.filter((c) => c.path === '/v1/remove' && !c.ended).length)
      faults = { ...(await fault(members)), inFlightAtFault2: inFlight[1], inFlightAtFault3: inFlight[2] }
    }
    let jobs: Job[] = []
    await until(
      async () => {
        jobs = await Promise.all(ids.map(async (id) => json<Job>(await call(`/v1/jobs/${id}`))))
        return jobs.every((j) => isTerminal(j))
      },
      'every job to end',
      WAIT_MS,
    )
    const seconds = (Date.now() - started) / 1000
    const usage = await json<{ held: number }>(await call('/v1/usage'))
    const perServer = members.map((m, i) => ({
      server: i + 1,
      removeCalls: m.proxy.calls.filter((c) => c.path === '/v1/remove').length,
      answeredInFull: m.proxy.calls.filter((c) => c.path === '/v1/remove' && c.status === 200 && c.ended).length,
    }))
    const late = (index: number, at: number | undefined) =>
      at === undefined
        ? 0
        : members[index].proxy.calls.filter((c) => c.path === '/v1/remove' && c.at > at + READY_TIMEOUT_MS).length
    const statuses = Object.fromEntries(
      [...new Set(jobs.map((j) => j.status))].map((s) => [s, jobs.filter((j) => j.status === s).length]),
    )
    const result = {
      name,
      servers: members.length,
      jobs: JOBS,
      seconds: round(seconds, 1),
      jobsPerMinute: round((JOBS / seconds) * 60, 1),
      statuses,
      errors: jobs.filter((j) => j.error).map((j) => j.error?.code),
      perServer,
      faults,
      invariants: {
        everyJobTerminal: jobs.every((j) => isTerminal(j)),
        heldCreditsZero: usage.held === 0,
        noCallToKilledServer: late(1, faults.killedAt) === 0,
        noCallToFrozenServer: late(2, faults.frozenAt) === 0,
      },
    }
    log(JSON.stringify(result))
    return result
  } finally {
    await api.stop()
  }
}

const startedAt = Date.now()
const image = new Uint8Array(
  await sharp(`${ROOT}bench/fixtures/astronaut.png`).resize(Number(flags.size)).png().toBuffer(),
)
const runs = []
const one = await startFleet(1)
try {
  runs.push(await runFleet('one', one, image))
} finally {
  await stopFleet(one)
}
const three = await startFleet(3)
try {
  runs.push(await runFleet('three', three, image))
  runs.push(
    await runFleet('three-fault', three, image, async (members) => {
      const killedAt = Date.now()
      process.kill(members[1].inference.child.proc.pid as number, 'SIGKILL')
      await sleep(1000)
      const frozenAt = Date.now()
      process.kill(members[2].inference.child.proc.pid as number, 'SIGSTOP')
      log('server 2 killed, server 3 frozen')
      return { killedAt, frozenAt }
    }),
  )
} finally {
  await stopFleet(three)
}

const passed = runs.every((r) => Object.values(r.invariants).every(Boolean))
const report = {
  name: flags.name,
  date: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - startedAt) / 1000),
  machine: machineInfo(),
  note:
    'Three servers with one intra-op thread each share this 2-core machine, so little speed-up is ' +
    'possible; the point is where work goes and that the invariants hold.',
  settings: { ...VARS, jobs: JOBS, imageSide: Number(flags.size), options: OPTIONS },
  speedupThreeVsOne: round(runs[1].jobsPerMinute / runs[0].jobsPerMinute, 2),
  runs,
  passed,
}
mkdirSync(RESULTS_DIR, { recursive: true })
const out = `${RESULTS_DIR}fleet-${flags.name}.json`
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
log(`wrote ${out}: ${passed ? 'every invariant held' : 'an invariant broke'}`)
if (!passed) process.exitCode = 1
