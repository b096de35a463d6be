/**
 * @module
 * Publishing events beyond a job's own SSE log: to every webhook endpoint of the workspace that
 * subscribes to the type (DESIGN.md §3: without `events`, every type except progress).
 */
import { SSE_ONLY_TYPES, type EventEnvelope } from '../lib/events'
import type { Env } from '../env'
import { outboxFor, subscribedEndpointIds } from './webhooks'

/**
 * Hands the event to the WebhookOutbox of each subscribed endpoint. Resolves once every outbox
 * has stored it (delivery then happens on the outbox's own alarms); rejects if any could not.
 * Safe to call again with the same event: each outbox keeps one delivery per event id.
 */
export async function publishEvent(env: Env, event: EventEnvelope): Promise<void> {
  if (SSE_ONLY_TYPES.includes(event.type)) return
  const endpointIds = await subscribedEndpointIds(env.DB, event.workspaceId, event.type)
  await Promise.all(endpointIds.map((id) => outboxFor(env, id).enqueue(id, event)))
}
