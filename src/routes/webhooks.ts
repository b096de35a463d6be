/**
 * @module
 * Webhooks (SPEC.md §4): register, list and delete endpoints; read an endpoint's deliveries and
 * replay one. Every route needs `webhooks:write` (DESIGN.md §3). Deliveries are made by the
 * endpoint's WebhookOutbox Durable Object.
 */
import { createRoute, z } from '@hono/zod-openapi'
import { ApiError, problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { IDEMPOTENCY_CONFLICT, IdParams, json, noCredentials, OptionalIdempotencyHeaders } from '../schemas/common'
import { EventSchema } from '../schemas/events'
import {
  ReplayParams,
  ReplaySchema,
  WebhookCreateSchema,
  WebhookDeliveryListSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
} from '../schemas/webhook'
import type { Env } from '../env'
import { HOUR_MS } from '../lib/time'
import { createOnce } from '../services/idempotency'
import {
  createEndpoint,
  decryptSecret,
  disableEndpoint,
  findEndpoint,
  listEndpoints,
  MAX_ENDPOINTS_PER_WORKSPACE,
  outboxFor,
  RETRY_WINDOW_MS,
  toEndpoint,
} from '../services/webhooks'

const security = [{ Bearer: [] }]
const tags = ['Webhooks']

export const create = createRoute({
  method: 'post',
  path: '/v1/webhooks',
  operationId: 'createWebhook',
  summary: 'Register a webhook endpoint',
  description: `Needs the \`webhooks:write\` scope. Each delivery is a POST of the event, signed with the endpoint's secret (\`whsec_…\`, returned only here and to a replay with the same Idempotency-Key): \`webhook-signature\` is the hex HMAC-SHA256 of \`{timestamp}.{deliveryId}.{rawBody}\`, sent with \`webhook-id\` and \`webhook-timestamp\`; failed attempts are retried for up to ${RETRY_WINDOW_MS / HOUR_MS} hours. A public URL must use HTTPS and pass the SSRF guard (422 \`unsafe_url\`), and a workspace may have at most ${MAX_ENDPOINTS_PER_WORKSPACE} enabled endpoints.`,
  tags,
  security,
  middleware: [authorize('POST /v1/webhooks')] as const,
  request: {
    headers: OptionalIdempotencyHeaders,
    body: { required: true, content: { 'application/json': { schema: WebhookCreateSchema } } },
  },
  responses: {
    201: json(
      WebhookEndpointCreatedSchema,
      'The endpoint and its signing secret, shown only here (and to a replay of the same Idempotency-Key, for 24 hours)',
    ),
    409: problemContent(`Conflict: ${IDEMPOTENCY_CONFLICT}`),
    422: problemContent('The URL points at a prohibited target (SSRF guard)'),
  },
})

export const list = createRoute({
  method: 'get',
  path: '/v1/webhooks',
  operationId: 'listWebhooks',
  summary: "List the workspace's webhook endpoints",
  description:
    'Needs the `webhooks:write` scope. Deleted endpoints are left out; an endpoint whose receiver answered 410 is listed with `disabledReason: gone`, as delivery to it has stopped. Signing secrets are never returned.',
  tags,
  security,
  middleware: [authorize('GET /v1/webhooks')] as const,
  responses: {
    200: json(WebhookEndpointListSchema, 'Endpoints not deleted, newest first; secrets are never returned'),
  },
})

export const remove = createRoute({
  method: 'delete',
  path: '/v1/webhooks/{id}',
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook endpoint and stop its deliveries',
  description:
    "Needs the `webhooks:write` scope. Delivery stops at once: deliveries still waiting for an attempt are marked failed, and the endpoint's delivery history stays readable. An endpoint not in this workspace is 404 `webhook_endpoint_not_found`; deleting one twice answers 204 again.",
  tags,
  security,
  middleware: [authorize('DELETE /v1/webhooks/{id}')] as const,
  request: { params: IdParams },
  responses: { 204: { description: 'Delivery stopped; the delivery history stays readable' } },
})

export const deliveries = createRoute({
  method: 'get',
  path: '/v1/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: "List a webhook endpoint's latest deliveries",
  description:
    "Needs the `webhooks:write` scope. One delivery per event, with its status (`pending`, `retrying`, `delivered`, `failed`), attempts so far, the receiver's last HTTP status or error, and when the next attempt is due. A deleted endpoint's deliveries stay readable.",
  tags,
  security,
  middleware: [authorize('GET /v1/webhooks/{id}/deliveries')] as const,
  request: { params: IdParams },
  responses: { 200: json(WebhookDeliveryListSchema, 'The latest 100 deliveries, newest first') },
})

export const replay = createRoute({
  method: 'post',
  path: '/v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay',
  operationId: 'replayWebhookDelivery',
  summary: 'Send a webhook delivery again',
  description:
    'Needs the `webhooks:write` scope. Requeues a delivery in any status for an immediate attempt, with the same delivery id (`webhook-id`) so receivers can deduplicate it, and starts its retry schedule over. An endpoint that is deleted or disabled by a 410 is 400 `invalid_input`; a delivery unknown to the endpoint is 404 `webhook_delivery_not_found`.',
  tags,
  security,
  middleware: [authorize('POST /v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay')] as const,
  request: { params: ReplayParams },
  responses: { 202: json(ReplaySchema, 'Requeued for an immediate attempt, same delivery id') },
})

export const webhooks = createRouter()
  .openapi(create, async (c) => {
    const { workspaceId } = c.get('auth')
    const body = c.req.valid('json')
    const endpoint = await createOnce({
      db: c.env.DB,
      workspaceId,
      scope: 'webhooks',
      key: c.req.valid('header')['idempotency-key'],
      request: body,
      create: () => createEndpoint(c.env, workspaceId, body),
      idOf: (created) => created.id,
      find: (id) => endpointWithSecret(c.env, workspaceId, id),
    })
    return c.json(endpoint, 201)
  })
  .openapi(list, async (c) => c.json({ endpoints: await listEndpoints(c.env.DB, c.get('auth').workspaceId) }, 200))
  .openapi(remove, async (c) => {
    const { id } = c.req.valid('param')
    await findEndpoint(c.env.DB, c.get('auth').workspaceId, id)
    await disableEndpoint(c.env.DB, id, 'deleted')
    // D1 is what every delivery run checks; telling the outbox too settles its open deliveries now.
    await outboxFor(c.env, id).stop('deleted')
    return c.body(null, 204)
  })
  .openapi(deliveries, async (c) => {
    const { id } = c.req.valid('param')
    await findEndpoint(c.env.DB, c.get('auth').workspaceId, id)
    return c.json({ deliveries: await outboxFor(c.env, id).list() }, 200)
  })
  .openapi(replay, async (c) => {
    const { endpointId, deliveryId } = c.req.valid('param')
    const endpoint = await findEndpoint(c.env.DB, c.get('auth').workspaceId, endpointId)
    if (endpoint.disabled_at) {
      throw new ApiError(
        'invalid_input',
        `Webhook endpoint ${endpointId} is disabled (${endpoint.disabled_reason}); register the URL again to receive deliveries`,
        { field: 'endpointId' },
      )
    }
    const replayed = await outboxFor(c.env, endpointId).replay(deliveryId)
    if (!replayed)
      throw new ApiError('webhook_delivery_not_found', `No delivery ${deliveryId} for webhook endpoint ${endpointId}`)
    return c.json(replayed, 202)
  })

/**
 * A replayed registration answers as the first did, secret included: a client whose first answer
 * was lost needs that secret to verify deliveries. The secret is read back from the endpoint, where
 * it is kept AES-GCM encrypted; the idempotency record holds only the endpoint's id.
 */
async function endpointWithSecret(env: Env, workspaceId: string, id: string) {
  const row = await findEndpoint(env.DB, workspaceId, id)
  return { ...toEndpoint(row), secret: await decryptSecret(env.DATA_ENCRYPTION_KEY, row.secret_ciphertext, row.id) }
}

/**
 * What a registered endpoint receives (SPEC.md §6), said as an OpenAPI 3.1 webhook so that a
 * generated client types the body it will be sent: the Event envelope, signed.
 */
webhooks.openAPIRegistry.registerWebhook({
  method: 'post',
  path: 'image-event',
  operationId: 'receiveImageEvent',
  summary: 'An event, POSTed to each enabled endpoint subscribed to its type',
  description:
    'Verify `webhook-signature` before trusting the body: it is hex(HMAC-SHA256(secret, "{webhook-timestamp}.{webhook-id}.{raw body}")) with the endpoint’s whole `whsec_…` secret as the key. A delivery not answered with a 2xx is retried on a schedule; a replay keeps its `webhook-id`, so an endpoint can drop one it has seen.',
  tags,
  // The receiver checks `webhook-signature`, not a credential of this API.
  security: noCredentials,
  request: {
    headers: z.object({
      'webhook-id': z.uuid().openapi({ description: 'The delivery id (the same on every attempt and replay)' }),
      'webhook-timestamp': z.string().openapi({ description: 'Unix seconds when this attempt was signed' }),
      'webhook-signature': z.string().openapi({ description: 'Hex HMAC-SHA256, as the description says' }),
    }),
    body: { required: true, content: { 'application/json': { schema: EventSchema } } },
  },
  responses: { 200: { description: 'Any 2xx acknowledges the delivery' } },
})
