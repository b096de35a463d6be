import { z } from '@hono/zod-openapi'
import { Uuid } from './common'
import { EVENT_TYPES, SSE_ONLY_TYPES, type EventType } from '../lib/events'

/** Event types a webhook may subscribe to: all of DESIGN.md §3 except the SSE-only progress. */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES.filter((t) => !SSE_ONLY_TYPES.includes(t)) as [EventType, ...EventType[]]

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** Why an endpoint stopped receiving: deleted by its owner, or the receiver answered 410. */
export const DISABLED_REASONS = ['deleted', 'gone'] as const
export type DisabledReason = (typeof DISABLED_REASONS)[number]

export const MAX_WEBHOOK_URL_LENGTH = 2048

const DateTime = z.iso.datetime()

const EXAMPLE_ENDPOINT = {
  id: '2a4c6e8f-0b1d-4f3a-8c5e-7d9f1b3a5c7e',
  url: 'https://example.com/hooks/cutout',
  events: ['image.job.completed.v1', 'image.job.failed.v1'],
  createdAt: '2026-05-01T12:00:00.000Z',
  disabledAt: null,
  disabledReason: null,
}
const EXAMPLE_DELIVERY = {
  id: '7e5c3a1f-9d8b-4c6a-b4e2-0f1d3b5a7c9e',
  eventId: '1d3f5b7a-9c2e-4a6b-8d0f-2e4a6c8b0d1f',
  eventType: 'image.job.completed.v1',
  status: 'delivered',
  attempts: 1,
  responseStatus: 200,
  lastError: null,
  createdAt: '2026-05-04T09:30:01.500Z',
  deliveredAt: '2026-05-04T09:30:01.720Z',
  lastAttemptAt: '2026-05-04T09:30:01.600Z',
  nextAttemptAt: null,
} as const

export const WebhookCreateSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^https?$/ })
      .max(MAX_WEBHOOK_URL_LENGTH)
      .openapi({ example: 'https://example.com/hooks/cutout' }),
    events: z
      .array(z.enum(WEBHOOK_EVENT_TYPES))
      .min(1)
      .optional()
      .openapi({
        description:
          'Event types to receive; omit for every type except image.job.progress.v1 (SSE only), including types added later',
        example: ['image.job.completed.v1', 'image.job.failed.v1'],
      }),
  })
  .openapi('WebhookEndpointCreate', {
    example: { url: 'https://example.com/hooks/cutout', events: ['image.job.completed.v1', 'image.job.failed.v1'] },
  })

export type WebhookCreate = z.infer<typeof WebhookCreateSchema>

export const WebhookEndpointSchema = z
  .object({
    id: z.uuid(),
    url: z.url(),
    events: z
      .array(z.string())
      .openapi({ description: 'The event types delivered (all current types when none were chosen)' }),
    createdAt: DateTime.optional(),
    disabledAt: DateTime.nullable().optional().openapi({ description: 'Set when delivery stopped' }),
    disabledReason: z
      .enum(DISABLED_REASONS)
      .nullable()
      .optional()
      .openapi({ description: '`gone`: the receiver answered 410, so delivery stopped; `deleted`: DELETE was called' }),
  })
  .openapi('WebhookEndpoint', { example: EXAMPLE_ENDPOINT })

export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>

export const WebhookEndpointCreatedSchema = WebhookEndpointSchema.extend({
  secret: z.string().openapi({
    description: 'The signing secret (whsec_…); shown only in this response',
    example: 'whsec_EXAMPLE-only_not-a-real-secret_000000000000',
  }),
}).openapi('WebhookEndpointCreated', {
  example: { ...EXAMPLE_ENDPOINT, secret: 'whsec_EXAMPLE-only_not-a-real-secret_000000000000' },
})

export const WebhookEndpointListSchema = z
  .object({ endpoints: z.array(WebhookEndpointSchema) })
  .openapi('WebhookEndpointList', { example: { endpoints: [EXAMPLE_ENDPOINT] } })

export const WebhookDeliverySchema = z
  .object({
    id: z.uuid().openapi({ description: 'Stable across retries and replays; sent as webhook-id' }),
    eventId: z.uuid(),
    eventType: z.string().optional(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    responseStatus: z.number().int().nullable().optional(),
    lastError: z.string().nullable().optional(),
    createdAt: DateTime.optional(),
    deliveredAt: DateTime.nullable().optional(),
    lastAttemptAt: DateTime.nullable().optional(),
    nextAttemptAt: DateTime.nullable()
      .optional()
      .openapi({ description: 'When the next attempt is due (pending or retrying)' }),
  })
  .openapi('WebhookDelivery', { example: EXAMPLE_DELIVERY })

export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>

export const WebhookDeliveryListSchema = z
  .object({ deliveries: z.array(WebhookDeliverySchema) })
  .openapi('WebhookDeliveryList', { example: { deliveries: [EXAMPLE_DELIVERY] } })

export const ReplaySchema = z
  .object({ id: z.uuid(), status: z.literal('pending') })
  .openapi('WebhookReplay', { example: { id: EXAMPLE_DELIVERY.id, status: 'pending' } })

const uuidParam = (name: string) =>
  Uuid.openapi({ param: { name, in: 'path' }, example: '0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11' })

export const ReplayParams = z.object({ endpointId: uuidParam('endpointId'), deliveryId: uuidParam('deliveryId') })
