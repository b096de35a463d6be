/**
 * Test helpers that run inside workerd: seed a workspace with a key, call the API through the
 * Worker's own fetch handler, and reach the Node-side fixture server.
 */
import { env } from 'cloudflare:test'
import { exports } from 'cloudflare:workers'
import { mintApiKey, SCOPES, type Scope } from '../../src/services/auth'

export const BASE = 'https://api.test'

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
  return exports.default
    .fetch(new Request(new URL(path, BASE), { ...init, headers, body }))
    .then(assertRateLimitHeaders)
}

/** SPEC.md §7: every response carries RateLimit and RateLimit-Policy; every test call checks it. */
function assertRateLimitHeaders(res: Response): Response {
  const policy = res.headers.get('ratelimit-policy')
  const limit = res.headers.get('ratelimit')
  if (!policy?.match(/^"default";q=\d+;w=60$/) || !limit?.match(/^"default";r=\d+;t=\d+$/)) {
    throw new Error(`response ${res.status} lacks RateLimit headers: ${policy} / ${limit}`)
  }
  return res
}

export async function fixtureBytes(name: string): Promise<Uint8Array> {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/files/${name}`)
  if (!res.ok) throw new Error(`fixture ${name}: ${res.status}`)
  return new Uint8Array(await res.arrayBuffer())
}

export async function setInferenceMode(mode: 'normal' | 'down' | 'die-on-remove' | 'saturated' | 'hold-output') {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/control/inference?mode=${mode}&reset=1`, { method: 'POST' })
  return (await res.json()) as { mode: string; removeCalls: number }
}

export async function inferenceStats() {
  return (await (await fetch(`${env.FIXTURE_ORIGIN}/control/inference`)).json()) as {
    removeCalls: number
    held: number
  }
}

/** Lets every answer the proxy holds (mode `hold-output`) go on to its output and end. */
export async function releaseHeldAnswers(): Promise<number> {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/control/inference/release`, { method: 'POST' })
  return ((await res.json()) as { released: number }).released
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
  return body
}

export async function waitForStatus(key: string, jobId: string, statuses: string[], timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const job = (await (await api(`/v1/jobs/${jobId}`, { key })).json()) as { status: string; [k: string]: unknown }
    if (statuses.includes(job.status)) return job
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
