import { z } from '@hono/zod-openapi'

export const JOB_STATUSES = ['queued', 'processing', 'succeeded', 'failed', 'canceled'] as const
export const JOB_STAGES = ['queued', 'preparing', 'segmenting', 'refining', 'rendering', 'storing', 'complete'] as const
export type JobStatus = (typeof JOB_STATUSES)[number]
export type JobStage = (typeof JOB_STAGES)[number]
export const TERMINAL_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'canceled']

const DateTime = z.iso.datetime()

export const ResultSchema = z
  .object({ url: z.string(), contentType: z.string(), expiresAt: DateTime.nullable() })
  .openapi('Result')

const Notice = z.object({ code: z.string(), message: z.string() })

export const JobSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(['remove_background', 'virtual_try_on']),
    projectId: z.uuid().optional(),
    batchId: z.uuid().optional(),
    status: z.enum(JOB_STATUSES),
    stage: z.enum(JOB_STAGES),
    format: z.enum(['png', 'webp', 'jpeg', 'zip', 'psd']).optional(),
    modelVersion: z.string().nullable().openapi({ example: 'isnet-general@1.4.5+fp16' }),
    createdAt: DateTime,
    startedAt: DateTime.nullable().optional(),
    completedAt: DateTime.nullable().optional(),
    expiresAt: DateTime.nullable().optional(),
    result: ResultSchema.nullable(),
    error: Notice.nullable(),
    warnings: z.array(Notice),
    links: z.object({ self: z.string(), events: z.string(), result: z.string(), cancel: z.string() }),
  })
  .openapi('Job')

export type Job = z.infer<typeof JobSchema>

export const JobListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).optional(),
  cursor: z.string().max(200).optional(),
  status: z.enum(JOB_STATUSES).optional(),
  kind: z.enum(['remove_background', 'virtual_try_on']).optional(),
  batchId: z.uuid().optional(),
  projectId: z.uuid().optional(),
})

export const JobListSchema = z
  .object({ jobs: z.array(JobSchema), nextCursor: z.string().nullable() })
  .openapi('JobList')
