/**
 * @module
 * API keys (SPEC.md §4): GET/POST /v1/api-keys, DELETE /v1/api-keys/{id}; all need `keys:write`.
 */
import { createRoute } from '@hono/zod-openapi'
import { ApiError, problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyListSchema } from '../schemas/api-key'
import { IDEMPOTENCY_CONFLICT, IdParams, json, OptionalIdempotencyHeaders } from '../schemas/common'
import { RETRY_EXTENSION, type RetryRule } from '../schemas/retry'
import { createOnce } from '../services/idempotency'
import { createApiKey, listApiKeys, revokeApiKey } from '../services/api-keys'

const security = [{ Bearer: [] }]
const tags = ['API keys']

export const list = createRoute({
  method: 'get',
  path: '/v1/api-keys',
  operationId: 'listApiKeys',
  summary: "List the workspace's API keys",
  description:
    'Needs the `keys:write` scope. Lists every key not revoked, expired ones included, newest first, with its prefix, scopes, expiry and last use; the secret is never returned.',
  tags,
  security,
  middleware: [authorize('GET /v1/api-keys')] as const,
  responses: { 200: json(ApiKeyListSchema, 'Keys of this workspace (never their secrets)') },
})

export const create = createRoute({
  method: 'post',
  path: '/v1/api-keys',
  operationId: 'createApiKey',
  summary: 'Create an API key',
  description:
    "Needs the `keys:write` scope. The new key's scopes default to the caller's and may only be ones the caller holds (otherwise 403 `insufficient_scope`); its expiry may not be later than the calling key's, and without `expiresAt` it takes the calling key's expiry (none when called with a session). The secret `value` is shown only in this response and stored only as a hash.",
  tags,
  security,
  // Sent once by clients although it takes a key: a replay answers without the secret (stored only
  // as a hash), so a retried creation could only hand back a key nobody can use.
  [RETRY_EXTENSION]: 'once' satisfies RetryRule,
  middleware: [authorize('POST /v1/api-keys')] as const,
  request: {
    headers: OptionalIdempotencyHeaders,
    body: { required: false, content: { 'application/json': { schema: ApiKeyCreateSchema } } },
  },
  responses: {
    201: json(
      ApiKeyCreatedSchema,
      'The new key; `value` is shown only here. A replay of the same Idempotency-Key answers the same key without `value`: the secret is stored only as a hash',
    ),
    409: problemContent(`Conflict: ${IDEMPOTENCY_CONFLICT}`),
  },
})

export const remove = createRoute({
  method: 'delete',
  path: '/v1/api-keys/{id}',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key',
  description:
    'Needs the `keys:write` scope. The key is refused with 401 `invalid_api_key` from the next request on; a key unknown to this workspace or already revoked is 404 `api_key_not_found`. To rotate a key, create the new one before revoking the old one.',
  tags,
  security,
  middleware: [authorize('DELETE /v1/api-keys/{id}')] as const,
  request: { params: IdParams },
  responses: { 204: { description: 'Revoked: the key fails from the next request on' } },
})

export const apiKeys = createRouter()
  .openapi(list, async (c) => c.json({ keys: await listApiKeys(c.env.DB, c.get('auth').workspaceId) }, 200))
  .openapi(create, async (c) => {
    const auth = c.get('auth')
    const body = c.req.valid('json') ?? {}
    const key = await createOnce({
      db: c.env.DB,
      workspaceId: auth.workspaceId,
      scope: 'api-keys',
      key: c.req.valid('header')['idempotency-key'],
      request: body,
      create: () => createApiKey(c.env.DB, auth, body),
      idOf: (created) => created.id,
      find: (id) => replayedKey(c.env.DB, auth.workspaceId, id),
    })
    return c.json(key, 201)
  })
  .openapi(remove, async (c) => {
    await revokeApiKey(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    return c.body(null, 204)
  })

/**
 * A replayed creation answers with the key's metadata and no `value`: the secret exists only as a
 * hash (SPEC.md §2 ApiKey), so nothing could show it twice. A key revoked since is gone (404).
 */
async function replayedKey(db: D1Database, workspaceId: string, id: string) {
  const key = (await listApiKeys(db, workspaceId)).find((k) => k.id === id)
  if (!key) throw new ApiError('api_key_not_found', `API key ${id} was revoked since it was created`)
  return key
}
