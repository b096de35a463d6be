/**
 * @module
 * The event envelope of SPEC.md §6, the event types of DESIGN.md §3, and SSE framing.
 */
import type { JobStage, JobStatus } from '../contract/stages'

export const EVENT_TYPES = [
  'image.job.created.v1',
  'image.job.progress.v1',
  'image.job.completed.v1',
  'image.job.failed.v1',
  'image.job.canceled.v1',
  'image.batch.completed.v1',
  'image.export.completed.v1',
  'image.refinement.completed.v1',
] as const
export type EventType = (typeof EVENT_TYPES)[number]
export type JobEventType = Extract<EventType, `image.job.${string}`>
/** Events of a project's refinements and exports: webhooks and the project's own stream get them. */
export type ProjectEventType = 'image.refinement.completed.v1' | 'image.export.completed.v1'
export const PROJECT_EVENT_TYPES: readonly EventType[] = ['image.refinement.completed.v1', 'image.export.completed.v1']

/** Progress is for live watchers (SSE); webhooks get every other type unless they choose. */
export const SSE_ONLY_TYPES: readonly EventType[] = ['image.job.progress.v1']

export interface JobEventData {
  jobId: string
  status: JobStatus
  stage: JobStage
  batchId?: string
  error?: { code: string; message: string }
  [key: string]: unknown
}

export interface EventEnvelope<T extends EventType = EventType, D = Record<string, unknown>> {
  id: string
  type: T
  occurredAt: string
  workspaceId: string
  aggregateId: string
  correlationId: string
  data: D
}

export type JobEvent = EventEnvelope<JobEventType, JobEventData>

export function formatSse(event: EventEnvelope): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

/** Who a job event is about. */
export interface JobEventSubject {
  jobId: string
  workspaceId: string
  correlationId: string
  status: JobStatus
  stage: JobStage
  batchId?: string
}

/** Builds a job event (SSE and webhooks share it). */
export function jobEvent(type: JobEventType, subject: JobEventSubject, data: Record<string, unknown> = {}): JobEvent {
  const { jobId, workspaceId, correlationId, status, stage, batchId } = subject
  return {
    id: crypto.randomUUID(),
    type,
    occurredAt: new Date().toISOString(),
    workspaceId,
    aggregateId: jobId,
    correlationId,
    data: { jobId, status, stage, ...(batchId ? { batchId } : {}), ...data },
  }
}

/** Builds a project event about one refinement or export (`data` is that resource, with its `projectId`). */
export function projectEvent(
  type: ProjectEventType,
  subject: { id: string; workspaceId: string; correlationId: string },
  data: { projectId: string } & Record<string, unknown>,
): EventEnvelope<ProjectEventType> {
  return {
    id: crypto.randomUUID(),
    type,
    occurredAt: new Date().toISOString(),
    workspaceId: subject.workspaceId,
    aggregateId: subject.id,
    correlationId: subject.correlationId,
    data,
  }
}

/**
 * The events of a Durable Object's log (`events(seq, id, body)`) after the one `lastEventId`
 * names, oldest first: what an SSE stream replays on (re)connect.
 */
export function eventsAfter(sql: SqlStorage, lastEventId: string | null): EventEnvelope[] {
  const after = lastEventId
    ? (sql.exec<{ seq: number }>('SELECT seq FROM events WHERE id = ?', lastEventId).toArray()[0]?.seq ?? 0)
    : 0
  return sql
    .exec<{ body: string }>('SELECT body FROM events WHERE seq > ? ORDER BY seq', after)
    .toArray()
    .map((r) => JSON.parse(r.body) as EventEnvelope)
}
