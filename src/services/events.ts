/**
 * @module
 * Publishing events beyond a job's own SSE log: to every webhook endpoint of the workspace that
 * subscribes to the type (DESIGN.md §3: without `events`, every type except progress).
 */
import type { EventEnvelope } from '../durable/job-events'
import type { Env } from '../env'

/**
 * Hands the event to the WebhookOutbox of each subscribed endpoint. Resolves once every outbox
 * has stored it (delivery then happens on the outbox's own alarms); rejects if any could not.
 */
export async function publishEvent(env: Env, event: EventEnvelope): Promise<void> {
  void env
  void event
  // Implemented with the webhooks (issue 4).
}
