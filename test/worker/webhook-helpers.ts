/**
 * Helpers for the webhook tests: the fixture server's receivers, endpoint registration, the
 * endpoint's outbox stub and its alarm, and polling.
 */
import { env, runInDurableObject } from 'cloudflare:test'
import { jobEvent as buildJobEvent, type EventEnvelope, type JobEventType } from '../../src/lib/events'
import { api } from './helpers'

export { sleep, waitFor } from './helpers'

export interface Received {
  method: string
  headers: Record<string, string>
  body: string
  receivedAt: number
}

export interface Delivery {
  id: string
  eventId: string
  eventType: string
  status: 'pending' | 'retrying' | 'delivered' | 'failed'
  attempts: number
  responseStatus: number | null
  lastError: string | null
  createdAt: string
  deliveredAt: string | null
  lastAttemptAt: string | null
  nextAttemptAt: string | null
}

export interface Scripted {
  status: number
  headers?: Record<string, string>
  body?: string
  delayMs?: number
  /** Close the connection without answering. */
  drop?: boolean
}

/** A fresh receiver on the fixture server, answering `script` in order (then 200). */
export async function newReceiver(script: Scripted[] = []) {
  const name = `r-${crypto.randomUUID()}`
  const res = await fetch(`${env.FIXTURE_ORIGIN}/receiver/${name}/script`, {
    method: 'POST',
    body: JSON.stringify(script),
  })
  if (res.status !== 204) throw new Error(`receiver script: ${res.status}`)
  return {
    url: `${env.FIXTURE_ORIGIN}/receiver/${name}`,
    log: async () => (await (await fetch(`${env.FIXTURE_ORIGIN}/receiver/${name}/log`)).json()) as Received[],
  }
}

export async function createWebhook(key: string, body: unknown) {
  return api('/v1/webhooks', { method: 'POST', key, json: body })
}

/** Registers an endpoint and returns it with its secret. */
export async function registerWebhook(key: string, url: string, events?: string[]) {
  const res = await createWebhook(key, events ? { url, events } : { url })
  if (res.status !== 201) throw new Error(`register webhook: ${res.status} ${await res.text()}`)
  return (await res.json()) as { id: string; url: string; events: string[]; secret: string }
}

export async function listDeliveries(key: string, endpointId: string): Promise<Delivery[]> {
  const res = await api(`/v1/webhooks/${endpointId}/deliveries`, { key })
  if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { deliveries: Delivery[] }).deliveries
}

export function outbox(endpointId: string) {
  return env.WEBHOOK_OUTBOX.get(env.WEBHOOK_OUTBOX.idFromName(endpointId))
}

/**
 * The runtime fires a due alarm on its own. A test that drives an outbox's retries with
 * runDurableObjectAlarm calls this once the first retry is scheduled: the platform alarm moves an
 * hour out, so however slow the test is, no retry runs behind its back. The outbox keeps its own
 * schedule in storage and serves, when its alarm runs, whatever was due by then.
 */
export async function holdAlarm(endpointId: string): Promise<void> {
  await runInDurableObject(outbox(endpointId), async (_instance, state) => {
    if ((await state.storage.getAlarm()) !== null) await state.storage.setAlarm(Date.now() + 3_600_000)
  })
}

/** A synthetic job event for publishEvent, built like the runner builds its own. */
export function jobEvent(workspaceId: string, type: JobEventType = 'image.job.completed.v1'): EventEnvelope {
  return buildJobEvent(type, {
    jobId: crypto.randomUUID(),
    workspaceId,
    correlationId: 'test-correlation',
    status: 'succeeded',
    stage: 'complete',
  })
}
