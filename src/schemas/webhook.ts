import { z } from '@hono/zod-openapi'
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
  .openapi('WebhookEndpointCreate')

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
  .openapi('WebhookEndpoint')

export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>

export const WebhookEndpointCreatedSchema = WebhookEndpointSchema.extend({
  secret: z
    .string()
    .openapi({ description: 'The signing secret (whsec_…); shown only in this response', example: 'whsec_…' }),
}).openapi('WebhookEndpointCreated')

export const WebhookEndpointListSchema = z
  .object({ endpoints: z.array(WebhookEndpointSchema) })
  .openapi('WebhookEndpointList')

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
  .openapi('WebhookDelivery')

export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>

export const WebhookDeliveryListSchema = z
  .object({ deliveries: z.array(WebhookDeliverySchema) })
  .openapi('WebhookDeliveryList')

export const ReplaySchema = z.object({ id: z.uuid(), status: z.literal('pending') }).openapi('WebhookReplay')

const uuidParam = (name: string) =>
  z.uuid().openapi({ param: { name, in: 'path' }, example: '0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11' })

export const ReplayParams = z.object({ endpointId: uuidParam('endpointId'), deliveryId: uuidParam('deliveryId') })
