/**
 * @module
 * The event envelope of SPEC.md §6 and its SSE framing.
 */
import type { JobStage, JobStatus } from '../schemas/job'

export const EVENT_TYPES = [
  'image.job.created.v1',
  'image.job.progress.v1',
  'image.job.completed.v1',
  'image.job.failed.v1',
  'image.job.canceled.v1',
] as const
export type JobEventType = (typeof EVENT_TYPES)[number]

export interface JobEventData {
  jobId: string
  status: JobStatus
  stage: JobStage
  error?: { code: string; message: string }
  [key: string]: unknown
}

export interface EventEnvelope {
  id: string
  type: JobEventType
  occurredAt: string
  workspaceId: string
  aggregateId: string
  correlationId: string
  data: JobEventData
}

export function formatSse(event: EventEnvelope): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}
