/**
 * @module
 * Event streams in /openapi.json (SPEC.md §6; issue 46 item 5). OpenAPI 3.1 has no keyword for
 * the items of a `text/event-stream` (3.2 adds `itemSchema`), so a stream is said as far as 3.1
 * goes: the body is a string whose grammar the description gives, and `x-itemSchema` holds what
 * 3.2's `itemSchema` would: each event as `{id, event, data}`, `data` one line of JSON that is an
 * `Event` (the envelope webhooks carry too), registered as its own component.
 */
import { z } from '@hono/zod-openapi'
import { EVENT_TYPES, type EventType } from '../lib/events'

/** One event as a stream or a webhook carries it: the document's example of `Event`. */
export const EVENT_EXAMPLE = {
  id: '4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7b9d2f',
  type: 'image.job.progress.v1',
  occurredAt: '2026-05-04T09:30:00.400Z',
  workspaceId: 'f0e1d2c3-b4a5-4968-8776-655443322110',
  aggregateId: '6f1c2a9e-3b7d-4e0a-9c55-2d8e1f4b7a10',
  correlationId: 'req_5d0c7f3a-9b1e-4c2d-8a6f-3e4b5c6d7e8f',
  data: { jobId: '6f1c2a9e-3b7d-4e0a-9c55-2d8e1f4b7a10', status: 'processing', stage: 'segmenting' },
} as const

export const EventSchema = z
  .object({
    id: z.uuid().openapi({ description: 'The event id; send the last one seen as Last-Event-ID to resume' }),
    type: z.enum(EVENT_TYPES),
    occurredAt: z.iso.datetime({ offset: true }),
    workspaceId: z.uuid(),
    aggregateId: z.uuid().openapi({ description: 'The job, batch, refinement or export the event is about' }),
    correlationId: z.string().openapi({ description: 'The request id of the request that started it' }),
    data: z.record(z.string(), z.unknown()).openapi({ description: 'The resource as the event saw it' }),
  })
  .openapi('Event', {
    description: 'The event envelope of SPEC.md §6, as streams and webhooks carry it',
    example: EVENT_EXAMPLE,
  })

/** The grammar of a stream, for its description. */
const GRAMMAR =
  'Server-sent events (HTML Living Standard §9.2), UTF-8. Each event is three lines and a blank one: `id: <event id>`, `event: <type>`, `data: <the Event as one line of JSON>`. Lines starting with `:` are keep-alive comments. Reconnect with `Last-Event-ID` to get the events after it.'

/**
 * The `text/event-stream` content of a stream of `types`, with an example of its lines.
 * @example eventStream(['image.job.progress.v1', 'image.job.completed.v1'], example)
 */
export function eventStream(types: readonly EventType[], example: string) {
  return {
    'text/event-stream': {
      schema: { type: 'string' as const, description: `${GRAMMAR} Types: ${types.join(', ')}.` },
      example,
      'x-itemSchema': {
        type: 'object',
        properties: {
          id: { type: 'string', format: 'uuid' },
          event: { type: 'string', enum: [...types] },
          data: {
            type: 'string',
            contentMediaType: 'application/json',
            contentSchema: { $ref: '#/components/schemas/Event' },
          },
        },
        required: ['id', 'event', 'data'],
      },
    },
  }
}
