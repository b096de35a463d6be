/**
 * Test helpers that run inside workerd: seed a workspace with a key, call the API through the
 * Worker's own fetch handler, and reach the Node-side fixture server.
 */
import { env } from 'cloudflare:test'
import { exports } from 'cloudflare:workers'
import { TERMINAL_STATUSES } from '../../src/contract/stages'
import { UNLIMITED_PATHS } from '../../src/middleware/rate-limit'
import { mintApiKey, SCOPES, type Scope } from '../../src/services/auth'
import type { ProxyMode } from '../helpers/proxy-modes'
import { assertDeclaredStatus } from './declared-statuses'

export const BASE = 'https://api.test'

/**
 * Time budgets. These tests run on the stub segmenter (50 ms a run, test/helpers/inference-process.ts),
 * but the budgets still allow for the real model, which takes 1–3 s a removal end to end on this
 * 2-core box, up to ~8 s when other work shares the cores, so pointing the tests at a real server
 * stays possible. Budgets hold on a machine four times slower than
 * that: a busy machine makes a test slower, never red. A deadline is reached only when something
 * is stuck, and then the test fails with the state it was waiting on.
 */
export const MODEL_RUN_MS = 30_000
/** How long `runs` model runs one after another may take, with room for everything around them. */
export const modelBudget = (runs: number) => 60_000 + runs * MODEL_RUN_MS
/** A test's own timeout: past its deadlines, so those fail first with a useful message. */
export const testBudget = (runs: number) => modelBudget(runs) + 60_000

export const TERMINAL: string[] = [...TERMINAL_STATUSES]

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `probe` until it returns something truthy, or fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(50)
  }
}

export const RAW_CUTOUT = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
export const BINARY_MASK = {
  quality: 'fast',
  alpha: { mode: 'binary', threshold: 0.5, feather: 1 },
  output: 'mask',
} as const

export interface Seeded {
  workspaceId: string
  key: string
}

export async function seedWorkspace(
  opts: { credits?: number; scopes?: readonly Scope[]; expiresAt?: string } = {},
): Promise<Seeded> {
  const workspaceId = crypto.randomUUID()
  const key = await mintApiKey()
  const periodEnd = new Date(Date.now() + 30 * 86_400_000).toISOString()
  await env.DB.batch([
    env.DB.prepare('INSERT INTO workspaces (id, name) VALUES (?, ?)').bind(workspaceId, 'Test'),
    env.DB.prepare('INSERT INTO credit_accounts (workspace_id, credit_limit, period_ends_at) VALUES (?, ?, ?)').bind(
      workspaceId,
      opts.credits ?? 100,
      periodEnd,
    ),
    env.DB.prepare(
      'INSERT INTO api_keys (id, workspace_id, name, prefix, hash, scopes, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).bind(
      crypto.randomUUID(),
      workspaceId,
      'test',
      key.prefix,
      key.hash,
      JSON.stringify(opts.scopes ?? SCOPES),
      opts.expiresAt ?? null,
    ),
  ])
  return { workspaceId, key: key.value }
}

export type ApiInit = RequestInit & { key?: string; json?: unknown }

/**
 * Unless a test names one, each call comes from its own client address (documentation ranges,
 * never contacted), so per-IP windows and allowances belong only to the tests that probe them.
 */
export const randomClientIp = () => `203.0.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 250)}`

export function api(path: string, init: ApiInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  if (!headers.has('cf-connecting-ip')) headers.set('cf-connecting-ip', randomClientIp())
  if (init.key) headers.set('authorization', `Bearer ${init.key}`)
  let body = init.body
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(init.json)
  }
  const url = new URL(path, BASE)
  return exports.default
    .fetch(new Request(url, { ...init, headers, body }))
    .then((res) => assertRateLimitHeaders(res, path))
    .then((res) => assertDeclaredStatus(init.method ?? 'GET', url, res))
}

/** `RateLimit-Policy` with the window the test config sets (vitest.worker.config.mts; production's is 60 s). */
const RATE_POLICY = new RegExp(`^"default";q=\\d+;w=${Number(env.RATE_LIMIT_WINDOW_SECONDS)}$`)

/**
 * SPEC.md §7: every response carries RateLimit and RateLimit-Policy; every test call checks it.
 * The service documents (§4: health and contract) are outside §7 and carry neither.
 */
function assertRateLimitHeaders(res: Response, path: string): Response {
  const policy = res.headers.get('ratelimit-policy')
  const limit = res.headers.get('ratelimit')
  if (UNLIMITED_PATHS.has(new URL(path, BASE).pathname)) {
    if (policy || limit) throw new Error(`${path} is a service document but carries RateLimit headers`)
    return res
  }
  if (!policy?.match(RATE_POLICY) || !limit?.match(/^"default";r=\d+;t=\d+$/)) {
    throw new Error(`response ${res.status} lacks RateLimit headers: ${policy} / ${limit}`)
  }
  return res
}

export async function fixtureBytes(name: string): Promise<Uint8Array> {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/files/${name}`)
  if (!res.ok) throw new Error(`fixture ${name}: ${res.status}`)
  return new Uint8Array(await res.arrayBuffer())
}

/** What the test proxy in front of the inference server has seen since its mode was last set. */
export interface ProxyStats {
  mode: string
  removeCalls: number
  /** Readiness checks that reached the proxy. */
  readyChecks: number
  saturatedAnswers: number
  heldCalls: number
  /** Requests taken and never answered ('frozen'). */
  frozenRequests: number
  abortedCalls: number
  /** Answers held at their output ('hold-output'). */
  held: number
}

/**
 * Switches the test proxy in front of the inference server (test/helpers/inference-proxy.ts) and
 * resets its counters. 'hold-remove' takes removals and never answers them; 'frozen' takes every
 * request (readiness too) and never answers, like a SIGSTOPped server; 'freeze-on-remove' answers
 * until a removal arrives, then turns 'frozen' (that removal included), like a server SIGSTOPped
 * mid-call;
 * 'hold-output' forwards a removal's or a refinement's answer up to its output and holds the rest
 * until released (`releaseHeldAnswers`, or any switch of mode).
 */
export async function setInferenceMode(mode: ProxyMode) {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/control/inference?mode=${mode}`, { method: 'POST' })
  return (await res.json()) as ProxyStats
}

export async function inferenceStats() {
  return (await (await fetch(`${env.FIXTURE_ORIGIN}/control/inference`)).json()) as ProxyStats
}

/** Lets every answer the proxy holds (mode 'hold-output') go on to its output and end. */
export async function releaseHeldAnswers(): Promise<number> {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/control/inference/release`, { method: 'POST' })
  return ((await res.json()) as { released: number }).released
}

/**
 * The segmenter version the test inference server reports (its stub's in this stage,
 * test/helpers/global-setup.ts): what a job's `modelVersion` must say.
 */
export async function inferenceModelVersion(): Promise<string> {
  const res = await fetch(`${env.INFERENCE_URL}/health/ready`)
  return ((await res.json()) as { modelVersion: string }).modelVersion
}

export async function usage(key: string) {
  return (await (await api('/v1/usage', { key })).json()) as {
    held: number
    used: number
    available: number
    limit: number
  }
}

/** Uploads bytes through the three-step upload API; returns the completed upload. */
export async function uploadImage(key: string, bytes: Uint8Array, contentType = 'image/png') {
  const created = (await (await api('/v1/uploads', { method: 'POST', key })).json()) as {
    id: string
    uploadUrl: string
  }
  const put = await api(created.uploadUrl, {
    method: 'PUT',
    key,
    body: bytes,
    headers: { 'content-type': contentType, 'content-length': String(bytes.byteLength) },
  })
  if (put.status !== 204) throw new Error(`PUT content: ${put.status} ${await put.text()}`)
  const done = await api(`/v1/uploads/${created.id}/complete`, { method: 'POST', key })
  if (done.status !== 200) throw new Error(`complete: ${done.status} ${await done.text()}`)
  return (await done.json()) as { id: string; width: number; height: number; mimeType: string }
}

export function removal(key: string, body: unknown, opts: { idempotencyKey?: string; wait?: number } = {}) {
  const headers: Record<string, string> = { 'idempotency-key': opts.idempotencyKey ?? crypto.randomUUID() }
  if (opts.wait !== undefined) headers.prefer = `wait=${opts.wait}`
  return api('/v1/removals', { method: 'POST', key, json: body, headers })
}

export async function expectProblem(res: Response, status: number, code: string, field?: string) {
  const text = await res.text()
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`expected problem+json ${status} ${code}, got ${res.status}: ${text}`)
  }
  if (res.status !== status || body.code !== code || (field !== undefined && body.field !== field)) {
    throw new Error(`expected ${status} ${code}${field ? ` (${field})` : ''}, got ${res.status}: ${text}`)
  }
  if (!res.headers.get('content-type')?.startsWith('application/problem+json')) throw new Error('not problem+json')
  const requestId = res.headers.get('x-request-id')
  if (!requestId || body.requestId !== requestId)
    throw new Error(`requestId mismatch: ${requestId} vs ${body.requestId}`)
  if (typeof body.retryable !== 'boolean' || typeof body.type !== 'string' || typeof body.title !== 'string') {
    throw new Error(`incomplete problem: ${text}`)
  }
  // SPEC.md §7: `type` is a URI under {docs_url}/errors/ with a hyphenated form of the code;
  // without DOCS_URL the base is the service's own origin, which serves those pages.
  const docs = env.DOCS_URL || new URL(res.url || BASE).origin
  const type = `${docs}/errors/${code.replaceAll('_', '-')}`
  if (body.type !== type) throw new Error(`type is ${body.type}, expected ${type}`)
  return body
}

export type JobView = {
  id: string
  status: string
  stage: string
  startedAt?: string | null
  completedAt?: string | null
  result: { url: string; contentType: string; confidence?: number } | null
  error: { code: string; message: string } | null
  warnings?: { code: string; message: string }[]
  [k: string]: unknown
}

/** Polls GET /v1/jobs/{id} until the job is in one of `statuses`. */
export async function waitForStatus(key: string, jobId: string, statuses: string[], timeoutMs = modelBudget(1)) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const job = (await (await api(`/v1/jobs/${jobId}`, { key })).json()) as JobView
    if (statuses.includes(job.status)) return job
    if (Date.now() > deadline) {
      throw new Error(`job ${jobId} still ${job.status} (${job.stage}) after ${timeoutMs} ms: ${JSON.stringify(job)}`)
    }
    await sleep(100)
  }
}

/** Waits for every job to end, within one deadline for them all; returns them in order. */
export async function waitForJobs(key: string | ((i: number) => string), ids: string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  const jobs: JobView[] = []
  for (const [i, id] of ids.entries()) {
    const k = typeof key === 'string' ? key : key(i)
    jobs.push(await waitForStatus(k, id, TERMINAL, Math.max(0, deadline - Date.now())))
  }
  return jobs
}

/**
 * Where a removal asked with `Prefer: wait` ends, however fast the machine is. The wait is a
 * bound, not a promise: 200 means the job ended within it, so the body must be terminal; 202 means
 * it had not, so the body must not be, and the job is followed to its end (in D1, so polling
 * spends no rate limit). Returns the ended job as GET /v1/jobs/{id} shows it to `auth`.
 */
export async function settled(res: Response, auth: ApiInit, timeoutMs = modelBudget(1)): Promise<JobView> {
  const text = await res.text()
  if (res.status !== 200 && res.status !== 202) throw new Error(`expected 200 or 202, got ${res.status}: ${text}`)
  const applied = res.headers.get('preference-applied')
  if (!applied?.match(/^wait=\d+$/)) throw new Error(`Preference-Applied is ${applied}`)
  const job = JSON.parse(text) as JobView
  if ((res.status === 200) !== TERMINAL.includes(job.status)) {
    throw new Error(`${res.status} with a ${job.status} job: ${text}`)
  }
  if (res.status === 200) return job
  if (res.headers.get('location') !== `/v1/jobs/${job.id}`) throw new Error(`202 without Location: ${text}`)
  await waitFor(
    async () => {
      const row = await env.DB.prepare('SELECT status FROM jobs WHERE id = ?').bind(job.id).first<{ status: string }>()
      return row && TERMINAL.includes(row.status)
    },
    `job ${job.id} to end`,
    timeoutMs,
  )
  const view = await api(`/v1/jobs/${job.id}`, auth)
  if (view.status !== 200) throw new Error(`GET job ${job.id}: ${view.status} ${await view.text()}`)
  return (await view.json()) as JobView
}

/** Waits out a 429's `Retry-After` (whole seconds): the caller's next request opens a new window. */
export async function waitOutRetryAfter(refused: Response): Promise<void> {
  const seconds = Number(refused.headers.get('retry-after'))
  if (!(seconds > 0)) throw new Error(`Expected a Retry-After on the ${refused.status} but received ${seconds}`)
  await sleep(seconds * 1000)
}

/**
 * Sends until the rate limit refuses (`max` at most); returns the 429 and the answers of its
 * window before it. Rate limits count in fixed windows (`RATE_LIMIT_WINDOW_SECONDS`, seconds in
 * the test config): a burst that crosses into a new window, which the `RateLimit` header's
 * remaining count shows by rising, counts again from there, so no test waits for a window to start.
 */
export async function burstUntilLimited(
  send: () => Promise<Response>,
  max = 1000,
): Promise<{ refused: Response; served: Response[] }> {
  let served: Response[] = []
  let last = Number.POSITIVE_INFINITY
  for (let sent = 0; sent < max; sent++) {
    const res = await send()
    if (res.status === 429) return { refused: res, served }
    const remaining = Number(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1])
    if (remaining >= last) served = [] // a new window began
    last = remaining
    served.push(res)
  }
  throw new Error(`Expected a 429 within ${max} requests`)
}
