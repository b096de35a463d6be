/**
 * @module
 * Publishing events beyond a job's own SSE log: to every webhook endpoint of the workspace that
 * subscribes to the type (DESIGN.md §3: without `events`, every type except progress), and a
 * project's refinement and export events to that project's stream.
 */
import { PROJECT_EVENT_TYPES, SSE_ONLY_TYPES, type EventEnvelope } from '../lib/events'
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
  const projectId = event.data.projectId
  if (PROJECT_EVENT_TYPES.includes(event.type) && typeof projectId === 'string') {
    await projectStream(env, projectId).append(event)
  }
}

/** The Durable Object holding a project's event log and its SSE watchers. */
export function projectStream(env: Env, projectId: string) {
  return env.PROJECT_STREAM.get(env.PROJECT_STREAM.idFromName(projectId))
}
