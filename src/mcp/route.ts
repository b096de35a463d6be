/**
 * @module
 * `POST /mcp`: the remote MCP server (Streamable HTTP, stateless; DESIGN.md §3 MCP). It sits
 * behind the app's middleware like every route — request id, the request log line, security
 * headers, the rate limit — and authenticates as they do: an API key or a session access token
 * in `Authorization: Bearer`, else 401 `invalid_api_key` (no anonymous callers). Each tool then
 * checks its own REST route's scopes. GET and DELETE (a standalone SSE stream, ending a session)
 * are 405: a stateless server offers neither, as the transport spec allows. It is not in the
 * OpenAPI document (docs/decisions.md "MCP").
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { Hono } from 'hono'
import type { AppEnv } from '../env'
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
      return await transport.handleRequest(c.req.raw)
    } finally {
      await server.close()
    }
  })
}
