import { z } from '@hono/zod-openapi'

import { JOB_STAGES, JOB_STATUSES } from '../contract/stages'

export { JOB_STAGES, JOB_STATUSES }
export type { JobStage, JobStatus } from '../contract/stages'

/** Public job kinds (DESIGN.md §3); refinements and exports run on the same runner but are not jobs to users. */
export const PUBLIC_JOB_KINDS = ['remove_background', 'virtual_try_on'] as const

const DateTime = z.iso.datetime()

export const ResultSchema = z
  .object({ url: z.string(), contentType: z.string(), expiresAt: DateTime.nullable() })
  .openapi('Result')

const Notice = z.object({ code: z.string(), message: z.string() })

export const JobSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(PUBLIC_JOB_KINDS),
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
  kind: z.enum(PUBLIC_JOB_KINDS).optional(),
  batchId: z.uuid().optional(),
  projectId: z.uuid().optional(),
})

export const JobListSchema = z
  .object({ jobs: z.array(JobSchema), nextCursor: z.string().nullable() })
  .openapi('JobList')
