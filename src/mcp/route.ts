/**
 * @module
 * `POST /mcp`: the remote MCP server (Streamable HTTP, stateless; DESIGN.md §3 MCP). It sits
 * behind the app's middleware like every route — request id, the request log line, security
 * headers, the rate limit — and authenticates as they do: an API key or a session access token
 * in `Authorization: Bearer`, else 401 `invalid_api_key` (no anonymous callers). Each tool then
 * checks its own REST route's scopes. GET and DELETE (a standalone SSE stream, ending a session)
 * are 405: a stateless server offers neither, as the transport spec allows. A JSON-RPC batch is
 * refused (400 `invalid_input`). It is not in the OpenAPI document (docs/decisions.md "MCP").
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { Hono } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { authenticate } from '../middleware/auth'
import { mcpServer } from './server'

export const MCP_PATH = '/mcp'

/** The router of `/mcp`; `version` is the API's, reported as the server's in `initialize`. */
export function mcpRoutes(version: string) {
  return new Hono<AppEnv>().post(MCP_PATH, async (c) => {
    await authenticate(c)
    const server = mcpServer(c, version)
    // JSON answers rather than an SSE stream: every tool answers once, within the bounded wait.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    await server.connect(transport)
    try {
      const text = await c.req.text()
      const message = parseJson(text)
      if (Array.isArray(message)) throw batchRefused()
      // Unparsable text goes to the transport as it came, for its JSON-RPC parse error.
      if (message === undefined) return await transport.handleRequest(new Request(c.req.raw, { body: text }))
      return await transport.handleRequest(c.req.raw, { parsedBody: message })
    } finally {
      await server.close()
    }
  })
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * One JSON-RPC message per POST: a batch of tool calls would count as one request against the
 * rate limit and run side by side in one Worker. MCP dropped batches in its 2025-06-18 revision;
 * the SDK still takes them (for 2025-03-26 clients), so they are refused here.
 */
const batchRefused = () =>
  new ApiError(
    'invalid_input',
    'Expected one JSON-RPC message per request, not a batch: each tool call is a request of its own',
  )
