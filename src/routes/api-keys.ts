/**
 * @module
 * API keys (SPEC.md §4): GET/POST /v1/api-keys, DELETE /v1/api-keys/{id}; all need `keys:write`.
 */
import { createRoute } from '@hono/zod-openapi'
import { errorResponses } from '../errors'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyListSchema } from '../schemas/api-key'
import { IdParams, json } from '../schemas/common'
import { createApiKey, listApiKeys, revokeApiKey } from '../services/api-keys'

const security = [{ Bearer: [] }]
const tags = ['API keys']

export const list = createRoute({
  method: 'get',
  path: '/v1/api-keys',
  operationId: 'listApiKeys',
  summary: "List the workspace's API keys",
  tags,
  security,
  middleware: [authorize('GET /v1/api-keys')] as const,
  responses: { 200: json(ApiKeyListSchema, 'Keys of this workspace (never their secrets)'), ...errorResponses },
})

export const create = createRoute({
  method: 'post',
  path: '/v1/api-keys',
  operationId: 'createApiKey',
  summary: 'Create an API key',
  tags,
  security,
  middleware: [authorize('POST /v1/api-keys')] as const,
  request: { body: { required: false, content: { 'application/json': { schema: ApiKeyCreateSchema } } } },
  responses: { 201: json(ApiKeyCreatedSchema, 'The new key; `value` is shown only here'), ...errorResponses },
})

export const remove = createRoute({
  method: 'delete',
  path: '/v1/api-keys/{id}',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key',
  tags,
  security,
  middleware: [authorize('DELETE /v1/api-keys/{id}')] as const,
  request: { params: IdParams },
  responses: { 204: { description: 'Revoked: the key fails from the next request on' }, ...errorResponses },
})

export const apiKeys = createRouter()
  .openapi(list, async (c) => c.json({ keys: await listApiKeys(c.env.DB, c.get('auth').workspaceId) }, 200))
  .openapi(create, async (c) => c.json(await createApiKey(c.env.DB, c.get('auth'), c.req.valid('json') ?? {}), 201))
  .openapi(remove, async (c) => {
    await revokeApiKey(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    return c.body(null, 204)
  })
