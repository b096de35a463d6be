/**
 * @module
 * `cutout mcp`: the API's MCP tools over stdio, for assistants that start local servers (Claude
 * Desktop, Claude Code, Cursor, VS Code). It is a bridge: `tools/list` and `tools/call` go to the
 * API's own MCP server (`POST /mcp`) through @cutout/sdk's transport, which sends CUTOUT_API_KEY
 * or the stored session's token (renewed as it expires), so the tools, their schemas and their
 * answers are the API's, defined once. One local addition: `remove_background` also takes `path`,
 * a local image file, which is uploaded here first, since a local assistant has files, not URLs
 * (and only once its first bytes show an image the API would take).
 * A call that makes something gets an idempotencyKey here when it has none, so a request whose
 * answer was lost can be sent again (`repeatable`) without making the job twice.
 * stdout carries the protocol only; messages go to stderr. See docs/mcp.md.
 */
import { readImageFile } from '@cutout/sdk/node'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { type Cutout, CutoutProblem } from '@cutout/sdk'
import { authedClient, type GlobalOptions } from '../context.js'

const CLIENT_INFO = { name: 'cutout-cli', version: '0.1.0' }

/** The local addition to `remove_background`: a file path instead of a URL or an upload id. */
const PATH_PROPERTY = {
  type: 'string',
  description:
    'A local image file (JPEG, PNG, WebP, AVIF, HEIC or HEIF; ≤ 50 MB) to upload and use instead of sourceUrl or uploadId',
}

const log = (line: string) => process.stderr.write(`cutout mcp: ${line}\n`)

/** The API's tools as last listed: their annotations and inputs say which calls may be repeated. */
const knownTools = new Map<string, Tool>()
const remember = (tools: Tool[]) => {
  for (const tool of tools) knownTools.set(tool.name, tool)
}
const takesKey = (name: string) => Boolean(knownTools.get(name)?.inputSchema.properties?.idempotencyKey)

/**
 * Whether a JSON-RPC message may be sent again: anything but a tool call (initialize, tools/list,
 * notifications), a call of a tool the API marks read-only or idempotent, or one carrying its own
 * idempotencyKey, which the API replays instead of making a second job.
 */
export function repeatable(message: unknown): boolean {
  if (Array.isArray(message)) return message.every(repeatable)
  const { method, params } = (message ?? {}) as { method?: string; params?: { name?: string; arguments?: object } }
  if (method !== 'tools/call') return true
  const annotations = knownTools.get(params?.name ?? '')?.annotations
  if (annotations?.readOnlyHint || annotations?.idempotentHint) return true
  return typeof (params?.arguments as { idempotencyKey?: unknown } | undefined)?.idempotencyKey === 'string'
}

const parsed = (body: RequestInit['body']) => {
  try {
    return typeof body === 'string' ? JSON.parse(body) : undefined
  } catch {
    return undefined
  }
}

/**
 * The SDK's transport as the MCP client's fetch: the credential on every request, the SDK's
 * retries (SPEC.md §7) for a message that may be repeated (`repeatable`: a lost connection, a 5xx,
 * a 429), and a refused POST read as the API's problem (so a bad key says `invalid_api_key`, not
 * "HTTP 401"). Other answers go to the MCP client as they are: it takes the 405 to its GET to mean
 * "no SSE stream". A call that may not be repeated is sent once.
 */
function apiFetch(cutout: Cutout) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(url, init)
    const again = request.method !== 'POST' || repeatable(parsed(init?.body))
    const res = await cutout.send(request, again ? { idempotent: true } : { retry: false })
    const problem = res.headers.get('content-type')?.includes('problem+json')
    if (request.method === 'POST' && !res.ok && problem) throw await CutoutProblem.fromResponse(res)
    return res
  }
}

/** The API's tool list, with `path` added to `remove_background`. */
function withLocalPath(tools: Tool[]): Tool[] {
  return tools.map((tool) => {
    if (tool.name !== 'remove_background') return tool
    const properties = { ...tool.inputSchema.properties, path: PATH_PROPERTY }
    const description = `${tool.description ?? ''} Over this local server, path (a local file) may be given instead.`
    return { ...tool, description, inputSchema: { ...tool.inputSchema, properties } }
  })
}

/** A call as the API takes it: a local `path` becomes the `uploadId` of its upload. */
async function resolveLocalPath(cutout: Cutout, params: CallToolRequest['params']): Promise<CallToolRequest['params']> {
  const { path, ...args } = params.arguments ?? {}
  if (params.name !== 'remove_background' || path === undefined) return params
  if (typeof path !== 'string') throw problem('invalid_input', 'Expected path as a string', 'path')
  if (args.sourceUrl !== undefined || args.uploadId !== undefined) {
    throw problem('invalid_input', 'Expected exactly one of path, sourceUrl or uploadId', 'path')
  }
  // A file the API would refuse (not an image: /etc/shadow) is refused from its first bytes, in
  // the API's words, before any of it is uploaded.
  const image = await readImageFile(path, { field: 'path' }).catch((err: NodeJS.ErrnoException) => {
    if (err instanceof CutoutProblem) throw err
    throw problem('invalid_input', `Cannot read ${path}: ${err.code ?? err.message}`, 'path')
  })
  const upload = await cutout.upload(image)
  return { ...params, arguments: { ...args, uploadId: upload.id } }
}

const problem = (code: string, detail: string, field?: string) =>
  new CutoutProblem(400, { code, detail, ...(field ? { field } : {}) })

/** A problem as the API's tools answer one: `code: detail`, then the problem itself. */
function toolError(err: CutoutProblem): CallToolResult {
  const body = {
    code: err.code,
    title: err.title,
    detail: err.detail,
    status: err.status,
    retryable: err.retryable,
    ...(err.field ? { field: err.field } : {}),
    ...(err.requestId ? { requestId: err.requestId } : {}),
  }
  return {
    isError: true,
    content: [
      { type: 'text', text: `${err.code}: ${err.detail}` },
      { type: 'text', text: JSON.stringify(body, null, 2) },
    ],
    structuredContent: body,
  }
}

/**
 * A call of a tool that takes an idempotencyKey gets one when the assistant gave none, as the SDK
 * gives every creating POST its `Idempotency-Key`: one call is one job even when its request is
 * sent again after a lost answer.
 */
function withKey(params: CallToolRequest['params']): CallToolRequest['params'] {
  if (!takesKey(params.name) || params.arguments?.idempotencyKey !== undefined) return params
  return { ...params, arguments: { ...params.arguments, idempotencyKey: crypto.randomUUID() } }
}

async function callTool(cutout: Cutout, remote: Client, params: CallToolRequest['params']): Promise<CallToolResult> {
  try {
    return (await remote.callTool(withKey(await resolveLocalPath(cutout, params)))) as CallToolResult
  } catch (err) {
    if (err instanceof CutoutProblem) return toolError(err)
    throw err
  }
}

/** Connects to the API's MCP server, then serves its tools on stdin/stdout until stdin ends. */
export async function mcp(options: GlobalOptions): Promise<void> {
  const cutout = await authedClient(options, log)
  const remote = new Client(CLIENT_INFO)
  const url = new URL('/mcp', `${cutout.baseUrl}/`)
  await remote.connect(new StreamableHTTPClientTransport(url, { fetch: apiFetch(cutout) }))
  remember((await remote.listTools()).tools)
  const server = remote.getServerVersion()
  const local = new Server(
    { name: server?.name ?? 'cutout', version: server?.version ?? CLIENT_INFO.version },
    { capabilities: { tools: {} }, instructions: remote.getInstructions() },
  )
  local.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const listed = await remote.listTools(request.params)
    remember(listed.tools)
    return { ...listed, tools: withLocalPath(listed.tools) }
  })
  local.setRequestHandler(CallToolRequestSchema, (request) => callTool(cutout, remote, request.params))
  const closed = new Promise<void>((resolve) => {
    local.onclose = resolve
  })
  await local.connect(new StdioServerTransport())
  log(`serving the tools of ${url} on stdio`)
  process.stdin.once('end', () => void local.close())
  await closed
  await remote.close()
}
