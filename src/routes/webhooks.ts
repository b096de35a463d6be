/**
 * @module
 * Webhooks (SPEC.md §4): register, list and delete endpoints; read an endpoint's deliveries and
 * replay one. Every route needs `webhooks:write` (DESIGN.md §3). Deliveries are made by the
 * endpoint's WebhookOutbox Durable Object.
 */
import { createRoute } from '@hono/zod-openapi'
import { ApiError, errorResponses, problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { IdParams, json } from '../schemas/common'
import {
  ReplayParams,
  ReplaySchema,
  WebhookCreateSchema,
  WebhookDeliveryListSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
} from '../schemas/webhook'
import { createEndpoint, disableEndpoint, findEndpoint, listEndpoints, outboxFor } from '../services/webhooks'

const security = [{ Bearer: [] }]
const tags = ['Webhooks']

export const create = createRoute({
  method: 'post',
  path: '/v1/webhooks',
  operationId: 'createWebhook',
  summary: 'Register a webhook endpoint',
  tags,
  security,
  middleware: [authorize('POST /v1/webhooks')] as const,
  request: { body: { required: true, content: { 'application/json': { schema: WebhookCreateSchema } } } },
  responses: {
    201: json(WebhookEndpointCreatedSchema, 'The endpoint and its signing secret, shown only here'),
    ...errorResponses,
    422: problemContent('The URL points at a prohibited target (SSRF guard)'),
  },
})

export const list = createRoute({
  method: 'get',
  path: '/v1/webhooks',
  operationId: 'listWebhooks',
  summary: "List the workspace's webhook endpoints",
  tags,
  security,
  middleware: [authorize('GET /v1/webhooks')] as const,
  responses: {
    200: json(WebhookEndpointListSchema, 'Endpoints not deleted, newest first; secrets are never returned'),
    ...errorResponses,
  },
})

export const remove = createRoute({
  method: 'delete',
  path: '/v1/webhooks/{id}',
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook endpoint and stop its deliveries',
  tags,
  security,
  middleware: [authorize('DELETE /v1/webhooks/{id}')] as const,
  request: { params: IdParams },
  responses: { 204: { description: 'Delivery stopped; the delivery history stays readable' }, ...errorResponses },
})

export const deliveries = createRoute({
  method: 'get',
  path: '/v1/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: "List a webhook endpoint's latest deliveries",
  tags,
  security,
  middleware: [authorize('GET /v1/webhooks/{id}/deliveries')] as const,
  request: { params: IdParams },
  responses: { 200: json(WebhookDeliveryListSchema, 'The latest 100 deliveries, newest first'), ...errorResponses },
})

export const replay = createRoute({
  method: 'post',
  path: '/v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay',
  operationId: 'replayWebhookDelivery',
  summary: 'Send a webhook delivery again',
  tags,
  security,
  middleware: [authorize('POST /v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay')] as const,
  request: { params: ReplayParams },
  responses: { 202: json(ReplaySchema, 'Requeued for an immediate attempt, same delivery id'), ...errorResponses },
})

export const webhooks = createRouter()
  .openapi(create, async (c) =>
    c.json(await createEndpoint(c.env, c.get('auth').workspaceId, c.req.valid('json')), 201),
  )
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
    if (!replayed) throw new ApiError('job_not_found', `No delivery ${deliveryId} for webhook endpoint ${endpointId}`)
    return c.json(replayed, 202)
  })
