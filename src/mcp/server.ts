/**
 * @module
 * The MCP server of one request (stateless Streamable HTTP: a server and transport per POST, as
 * the SDK's stateless mode asks). The protocol — JSON-RPC, initialize, capabilities, the transport's
 * header and version checks — is `@modelcontextprotocol/sdk`'s; listing and calling the tools is
 * ours, so that arguments are checked by the REST contract's zod schemas with REST's wording, a
 * tool checks its routes' scopes, and every refusal is the REST problem as a tool error
 * (docs/decisions.md "MCP").
 */
import { z } from '@hono/zod-openapi'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  type CallToolResult,
  ErrorCode,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { ApiError, issueToApiError, problemOf } from '../errors'
import { log } from '../lib/log'
import { ROUTE_ACCESS } from '../services/access'
import { assertScopes } from '../services/auth'
import { errorResult } from './results'
import { MCP_TOOLS, type McpTool } from './tools'

const INSTRUCTIONS =
  'Cutout removes image backgrounds. Give remove_background a public image URL (sourceUrl), or reserve an upload with create_upload, PUT the bytes, and pass its id as uploadId. Results are PNGs kept 24 hours; get_job reads a job again.'

/**
 * The Server takes a JSON Schema validator only for elicitation replies, which this server never
 * asks for; its default (Ajv) compiles with `new Function`, which Workers refuse, and costs a
 * start per request. So: one that is never called, and says so if it ever is.
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'This server does not elicit input' }),
}

/** What `tools/list` shows: the input schema as JSON Schema, from the same zod schema the call is checked with. */
function describe(tool: McpTool): Tool {
  const { $schema: _, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input' }) as Tool['inputSchema'] & {
    $schema?: string
  }
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: { ...inputSchema, type: 'object' },
    annotations: { title: tool.title, ...tool.annotations },
  }
}

const TOOL_LIST: Tool[] = MCP_TOOLS.map(describe)
const BY_NAME = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]))

/** What MCP says a `tools/call` carries (`_meta` and the rest pass: they are the protocol's). */
const ToolCallParams = z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() })

/**
 * A `tools/call`'s params, checked with REST's wording: a malformed call is -32602 (Invalid
 * params) whose message is the problem's detail naming the field (`params.arguments`), with the
 * problem REST would answer as its `data`.
 */
function toolCallParams(c: Context<AppEnv>, params: unknown): z.infer<typeof ToolCallParams> {
  const parsed = ToolCallParams.safeParse(params)
  if (parsed.success) return parsed.data
  const refusal = issueToApiError(parsed.error.issues[0], ['params'])
  throw new McpError(ErrorCode.InvalidParams, refusal.message, problemOf(c, refusal))
}

/** Runs a tool as its REST route would run: scopes, then the arguments, then the service. */
async function call(c: Context<AppEnv>, tool: McpTool, args: unknown): Promise<CallToolResult> {
  for (const route of tool.routes) assertScopes(c.get('auth'), ROUTE_ACCESS[route].scopes)
  const parsed = await tool.input.safeParseAsync(args ?? {})
  if (!parsed.success) throw issueToApiError(parsed.error.issues[0])
  return tool.run(c, parsed.data)
}

/** A tool call's answer; a refusal (or a failure, as REST's 500) as a tool error, logged with its code. */
async function answer(c: Context<AppEnv>, tool: McpTool, args: unknown): Promise<CallToolResult> {
  const fields = { tool: tool.name, requestId: c.get('requestId'), traceId: c.get('traceId') }
  try {
    const result = await call(c, tool, args)
    log('info', 'mcp tool', { ...fields, outcome: 'ok' })
    return result
  } catch (err) {
    const refusal = err instanceof ApiError
    if (!refusal) log('error', 'unexpected error', { ...fields, error: String(err) })
    const problem = refusal
      ? err
      : new ApiError('processing_failed', 'An unexpected error occurred', { retryable: true })
    log(refusal ? 'info' : 'error', 'mcp tool', { ...fields, outcome: 'error', code: problem.code })
    return errorResult(problemOf(c, problem))
  }
}

/** The server of one request; its tools act for the request's (already authenticated) caller. */
export function mcpServer(c: Context<AppEnv>, version: string): Server {
  const server = new Server(
    { name: 'cutout', title: 'Cutout image API', version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: NO_ELICITATION },
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }))
  // `tools/call` is the fallback (the handler of methods without one) rather than registered with
  // CallToolRequestSchema: the SDK parses a registered method's params before its handler runs,
  // and answers a parse failure -32603 "Internal error" with zod's raw dump.
  server.fallbackRequestHandler = (request: JSONRPCRequest) => {
    if (request.method !== 'tools/call') throw new McpError(ErrorCode.MethodNotFound, 'Method not found')
    const params = toolCallParams(c, request.params)
    const tool = BY_NAME.get(params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${params.name}`)
    return answer(c, tool, params.arguments)
  }
  return server
}
