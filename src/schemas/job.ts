import { z } from '@hono/zod-openapi'
import { Uuid } from './common'

import { JOB_STAGES, JOB_STATUSES, PUBLIC_JOB_KINDS } from '../contract/stages'

export { JOB_STAGES, JOB_STATUSES, PUBLIC_JOB_KINDS }
export type { JobStage, JobStatus } from '../contract/stages'

const DateTime = z.iso.datetime()

const EXAMPLE_JOB_ID = '6f1c2a9e-3b7d-4e0a-9c55-2d8e1f4b7a10'
const EXAMPLE_RESULT = {
  url: `/v1/jobs/${EXAMPLE_JOB_ID}/result?exp=1777887601&sig=9c1e5d0b7a3f28e4c6b1d9a05f7e3c2b8a4d6f1e0c9b7a5d3f2e1c0b9a8d7f6e`,
  contentType: 'image/png',
  expiresAt: '2026-05-04T09:40:01.000Z',
  confidence: 0.93,
}

/** A finished removal, as GET /v1/jobs/{id} shows it; the examples of the lists reuse it. */
export const EXAMPLE_JOB = {
  id: EXAMPLE_JOB_ID,
  kind: 'remove_background' as const,
  status: 'succeeded' as const,
  stage: 'complete' as const,
  format: 'png' as const,
  modelVersion: 'isnet-general@1.4.5+fp16',
  createdAt: '2026-05-04T09:30:00.000Z',
  startedAt: '2026-05-04T09:30:00.120Z',
  completedAt: '2026-05-04T09:30:01.480Z',
  expiresAt: '2026-05-05T09:30:01.480Z',
  result: EXAMPLE_RESULT,
  error: null,
  warnings: [],
  links: {
    self: `/v1/jobs/${EXAMPLE_JOB_ID}`,
    events: `/v1/jobs/${EXAMPLE_JOB_ID}/events`,
    result: `/v1/jobs/${EXAMPLE_JOB_ID}/result`,
    cancel: `/v1/jobs/${EXAMPLE_JOB_ID}`,
  },
}

export const ResultSchema = z
  .object({
    url: z.string(),
    contentType: z.string(),
    expiresAt: DateTime.nullable(),
    confidence: z.number().min(0).max(1).optional().openapi({
      description:
        "A background removal's: how sure its mask is, 0 (unsure) to 1 (sure): one minus the share of the subject's area that is neither clearly in nor clearly out, plus on `fast` the share its finish changed and on `high` the share where its extra view departs from `balanced`'s mask. Compare it within one quality level: each level has its own threshold, below which the job also carries the warning `low_confidence`: look at the result, and fix it with a few clicks if needed (the warning says how: a project from the job, then point refinements, or clicks in the editor). Absent on other jobs.",
      example: 0.93,
    }),
  })
  .openapi('Result', { example: EXAMPLE_RESULT })

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
  .openapi('Job', { example: EXAMPLE_JOB })

export type Job = z.infer<typeof JobSchema>

export const JobListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).optional().openapi({ example: 20 }),
  cursor: z.string().max(200).optional().openapi({
    description: 'nextCursor of the previous page',
    example: 'MjAyNi0wNS0wNFQwOTozMDowMC4wMDBafDZmMWMyYTllLTNiN2QtNGUwYS05YzU1LTJkOGUxZjRiN2ExMA',
  }),
  status: z.enum(JOB_STATUSES).optional().openapi({ example: 'succeeded' }),
  kind: z.enum(PUBLIC_JOB_KINDS).optional().openapi({ example: 'remove_background' }),
  batchId: Uuid.optional().openapi({ example: '3c9d7e21-5a4b-4f8e-8d1c-7b6a5e4d3c2b' }),
  projectId: Uuid.optional().openapi({
    description: 'The job this project was made from (its sourceJobId)',
    example: '8e2f4a6c-1b3d-4c5e-9f7a-2d4b6c8e0a1f',
  }),
})

export const JobListSchema = z
  .object({ jobs: z.array(JobSchema), nextCursor: z.string().nullable() })
  .openapi('JobList', { example: { jobs: [EXAMPLE_JOB], nextCursor: null } })

/** The query of a signed result URL (a job's or an export's `result.url`). */
export const ResultQuery = z.object({
  exp: z
    .string()
    .optional()
    .openapi({ description: 'Expiry of a signed result URL (from result.url)', example: '1777887601' }),
  sig: z.string().optional().openapi({
    description: 'Signature of a signed result URL',
    example: '9c1e5d0b7a3f28e4c6b1d9a05f7e3c2b8a4d6f1e0c9b7a5d3f2e1c0b9a8d7f6e',
  }),
})
