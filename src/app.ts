/**
 * @module
 * Builds the API: request ids, the resource routers and the OpenAPI 3.1 document.
 */
import { createRoute } from '@hono/zod-openapi'
import { MAX_JSON_BODY_BYTES } from './contract/limits'
import { notFoundOrNotAllowed, onError } from './errors'
import { mcpRoutes } from './mcp/route'
import { allowedMethods, createRouter } from './lib/router'
import { rateLimit } from './middleware/rate-limit'
import { requestId } from './middleware/request-id'
import { services } from './middleware/services'
import { drainUnreadBody, jsonBodyLimit } from './middleware/request-body'
import { securityHeaders } from './middleware/security-headers'
import { requestLog } from './middleware/trace'
import { apiKeys } from './routes/api-keys'
import { auth } from './routes/auth'
import { batches } from './routes/batches'
import { catalogImages } from './routes/catalog-images'
import { deviceAuthorizations } from './routes/device-authorizations'
import { health } from './routes/health'
import { jobs } from './routes/jobs'
import { projectEdits } from './routes/project-edits'
import { projects } from './routes/projects'
import { removals } from './routes/removals'
import { tryOns } from './routes/try-ons'
import { uploads } from './routes/uploads'
import { usage } from './routes/usage'
import { webhooks } from './routes/webhooks'
import { workspaces } from './routes/workspaces'
import { noCredentials } from './schemas/common'
import { withProblems } from './schemas/problems'
import { withScopes } from './schemas/scopes'
import { withRetryRules } from './schemas/retry'
import { TAGS } from './schemas/tags'

export const API_VERSION = '2.0.0'
const TITLE = 'Cutout image API'

/**
 * The document describes itself (SPEC.md §1 lists it among the service documents). Its handler
 * (below) is not an `openapi` route, so the route is registered by hand.
 */
const getOpenApiDocument = createRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'getOpenApiDocument',
  summary: 'Get this OpenAPI 3.1 contract',
  description:
    "Needs no credential. Describes the service's REST operations, with `servers` naming the origin the document was read from; the SDKs are generated from it. The MCP endpoint (/mcp) is not in it.",
  tags: ['Service'],
  security: noCredentials,
  responses: {
    200: {
      description: 'The OpenAPI 3.1 document the SDKs are generated from',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              openapi: { type: 'string' },
              info: { type: 'object', additionalProperties: true },
              paths: { type: 'object', additionalProperties: true },
            },
            required: ['openapi', 'info', 'paths'],
          },
          example: { openapi: '3.1.0', info: { title: TITLE, version: API_VERSION }, paths: {} },
        },
      },
    },
  },
})

/**
 * Every operation lists the problems its declaration implies beside its own (schemas/problems.ts)
 * and the scopes its access row asks (schemas/scopes.ts), once all routes are registered: what
 * /openapi.json says each can answer and who may call it.
 */
function declareProblems(app: ReturnType<typeof createRouter>): void {
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type === 'route') definition.route = withScopes(withProblems(definition.route))
  }
}

export function createApp() {
  const app = createRouter()
  // First: whatever answers a request, its body has been read to the end before the answer leaves.
  app.use('*', drainUnreadBody())
  app.use('*', requestId())
  app.use('*', services())
  app.use('*', requestLog())
  app.use('*', securityHeaders())
  app.use('*', rateLimit())
  app.use('*', jsonBodyLimit())
  app.route('/', health)
  app.route('/', uploads)
  app.route('/', removals)
  app.route('/', tryOns)
  app.route('/', jobs)
  app.route('/', batches)
  app.route('/', projects)
  app.route('/', projectEdits)
  app.route('/', catalogImages)
  app.route('/', usage)
  app.route('/', webhooks)
  app.route('/', apiKeys)
  app.route('/', auth)
  app.route('/', deviceAuthorizations)
  app.route('/', workspaces)
  // JSON-RPC over HTTP, not a REST resource: outside the OpenAPI document (docs/decisions.md "MCP").
  app.route('/', mcpRoutes(API_VERSION))
  app.openAPIRegistry.registerPath(getOpenApiDocument)
  declareProblems(app)
  app.openAPIRegistry.registerComponent('securitySchemes', 'Bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (sk_live_…) or a session access token (a JWT from sign-in)',
  })
  // Served by hand rather than by `doc31`, so that every operation carries its retry rule
  // (schemas/retry.ts); `doc31` would call the same generator.
  app.get('/openapi.json', (c) => {
    // Declared with the 3.0 object's types, which lack 3.1's `license.identifier`; the 3.1 generator keeps it.
    const config = {
      openapi: '3.1.0',
      info: {
        title: TITLE,
        version: API_VERSION,
        description: `Background removal and image editing. Errors are application/problem+json. A JSON request body is at most ${MAX_JSON_BODY_BYTES} bytes (1 MiB; larger is 413 request_too_large).`,
        license: { name: 'AGPL-3.0-or-later', identifier: 'AGPL-3.0-or-later' },
        // Whoever runs this deployment: its own origin, whose page and /docs say more.
        contact: { name: TITLE, url: new URL(c.req.url).origin },
      },
      servers: [{ url: new URL(c.req.url).origin }],
      tags: [...TAGS],
    } as Parameters<typeof app.getOpenAPI31Document>[0]
    return c.json(withRetryRules(app.getOpenAPI31Document(config)))
  })
  // Last, once every route is registered: a known path with another method is 405, not 404.
  app.notFound(notFoundOrNotAllowed(allowedMethods(app.routes)))
  app.onError(onError)
  return app
}
