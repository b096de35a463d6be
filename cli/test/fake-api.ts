/**
 * A small stand-in for the API on 127.0.0.1, for CLI behaviour the real stack cannot be made to
 * show on demand (a session for another host, a 402 on the second of two batches): the upload
 * flow, removals, batches, jobs, results and a minimal `/mcp` with the API's shapes, and every
 * request recorded.
 * `override` answers a request first (return undefined to fall through to the defaults).
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Seen {
  method: string
  path: string
  headers: IncomingMessage['headers']
  body: string
}

export interface Answer {
  status: number
  body?: unknown
  headers?: Record<string, string>
}

export interface FakeApi {
  baseUrl: string
  seen: Seen[]
  override?: (req: Seen) => Answer | undefined
  close(): Promise<void>
}

/** A 32×32 PNG (the smallest the API takes, so the CLI sends it) stands in for every input and result. */
export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000020000000200806000000737a7af40000000970485973000003e8000003e801b57b526b' +
    '0000002b4944415478daedce210100000c04a1eb5f7a8bf10681a7ab5b4a4040404040404040404040404040601d78540df86a78fe6e' +
    '800000000049454e44ae426082',
  'hex',
)

export const problem = (status: number, code: string, extra: Record<string, unknown> = {}): Answer => ({
  status,
  headers: { 'content-type': 'application/problem+json' },
  body: { type: `about:blank`, status, code, title: code, detail: code, retryable: false, requestId: 'req', ...extra },
})

function job(id: string, status: string) {
  const now = new Date().toISOString()
  return {
    id,
    status,
    stage: status === 'succeeded' ? 'done' : 'queued',
    createdAt: now,
    updatedAt: now,
    modelVersion: null,
    result: status === 'succeeded' ? { url: `/v1/jobs/${id}/result`, contentType: 'image/png', expiresAt: null } : null,
    error: null,
  }
}

/** What the stand-in's `/mcp` lists: `remove_background` alone, enough for `cutout mcp` to bridge it. */
const MCP_TOOLS = [
  {
    name: 'remove_background',
    inputSchema: {
      type: 'object',
      properties: { sourceUrl: { type: 'string' }, uploadId: { type: 'string' }, options: { type: 'object' } },
    },
    annotations: { readOnlyHint: false, idempotentHint: false },
  },
]

/**
 * A stateless MCP server at `/mcp`, as the API's is (JSON answers, 405 to GET): initialize, the
 * tool list, and a `tools/call` answered with its arguments, so a test sees what reached the API.
 */
function mcp(req: Seen): Answer {
  if (req.method !== 'POST') return { status: 405, headers: { allow: 'POST' } }
  const message = JSON.parse(req.body) as {
    id?: number
    method: string
    params?: { protocolVersion?: string; arguments?: unknown }
  }
  if (message.id === undefined) return { status: 202 } // a notification
  const results: Record<string, unknown> = {
    initialize: {
      protocolVersion: message.params?.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'cutout', version: '0' },
    },
    'tools/list': { tools: MCP_TOOLS },
    'tools/call': {
      content: [{ type: 'text', text: JSON.stringify(message.params?.arguments) }],
      structuredContent: message.params?.arguments,
    },
  }
  const result = results[message.method]
  const answer = result ? { result } : { error: { code: -32601, message: 'Method not found' } }
  return { status: 200, body: { jsonrpc: '2.0', id: message.id, ...answer } }
}

export async function startFakeApi(): Promise<FakeApi> {
  const batches = new Map<string, string[]>()
  const api: FakeApi = { baseUrl: '', seen: [], close: async () => {} }

  const route = (req: Seen): Answer => {
    const parts = req.path.split('/').filter(Boolean) // v1, resource, id, action
    const [, resource, id, action] = parts
    if (req.path === '/mcp') return mcp(req)
    if (req.method === 'GET' && req.path === '/v1/usage') {
      return { status: 200, body: { kind: 'workspace', limit: 50, available: 50, held: 0, used: 0 } }
    }
    if (req.method === 'POST' && req.path === '/v1/auth/logout') return { status: 204 }
    if (req.method === 'POST' && req.path === '/v1/auth/refresh') {
      return {
        status: 200,
        body: { accessToken: 'at_new', refreshToken: 'rt_new', tokenType: 'Bearer', expiresIn: 3600 },
      }
    }
    if (resource === 'uploads') {
      if (req.method === 'POST' && !id) {
        const upload = randomUUID()
        const expiresAt = new Date(Date.now() + 900_000).toISOString()
        return {
          status: 201,
          body: { id: upload, status: 'pending', expiresAt, uploadUrl: `/v1/uploads/${upload}/content` },
        }
      }
      if (req.method === 'PUT' && action === 'content') return { status: 204 }
      if (req.method === 'POST' && action === 'complete') {
        const expiresAt = new Date(Date.now() + 900_000).toISOString()
        return {
          status: 200,
          body: { id, status: 'ready', expiresAt, uploadUrl: '', width: 1, height: 1, mimeType: 'image/png' },
        }
      }
    }
    if (resource === 'removals' && req.method === 'POST') return { status: 200, body: job(randomUUID(), 'succeeded') }
    if (resource === 'batches') {
      if (req.method === 'POST') {
        const { uploadIds } = JSON.parse(req.body) as { uploadIds: string[] }
        const batch = randomUUID()
        const jobs = uploadIds.map(() => randomUUID())
        batches.set(batch, jobs)
        const body = { id: batch, status: 'processing', total: jobs.length, jobs: jobs.map((j) => job(j, 'queued')) }
        return { status: 202, body }
      }
      const jobs = batches.get(id)
      if (jobs) {
        const body = { id, status: 'complete', total: jobs.length, jobs: jobs.map((j) => job(j, 'succeeded')) }
        return { status: 200, body }
      }
    }
    if (resource === 'jobs' && req.method === 'GET') {
      if (action === 'result') return { status: 200, body: PNG, headers: { 'content-type': 'image/png' } }
      if (!action) return { status: 200, body: job(id, 'succeeded') }
    }
    return problem(404, 'job_not_found')
  }

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const seen: Seen = {
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://x').pathname,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    }
    api.seen.push(seen)
    const answer = api.override?.(seen) ?? route(seen)
    const raw = Buffer.isBuffer(answer.body)
    res.writeHead(answer.status, {
      ...(answer.body !== undefined && !raw ? { 'content-type': 'application/json' } : {}),
      ...answer.headers,
    })
    res.end(answer.body === undefined ? undefined : raw ? answer.body : JSON.stringify(answer.body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  api.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  api.close = () => new Promise((resolve) => server.close(() => resolve()))
  return api
}
