import { z } from '@hono/zod-openapi'
import { Uuid } from './common'
import { EXAMPLE_JOB, JobSchema } from './job'
import { RemovalOptionsSchema } from './removal'

export const MAX_BATCH_SIZE = 100
const EXAMPLE_BATCH_ID = '3c9d7e21-5a4b-4f8e-8d1c-7b6a5e4d3c2b'

export const BatchRequestSchema = z
  .strictObject({
    uploadIds: z.array(Uuid).min(1).max(MAX_BATCH_SIZE),
    options: RemovalOptionsSchema,
  })
  .openapi('BatchRequest', {
    example: {
      uploadIds: ['0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11', '4d2e8a1c-7b3f-4e6d-a5c9-1f0e2d3c4b5a'],
      options: { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' },
    },
  })

export const BatchSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(['processing', 'complete']),
    total: z.number().int(),
    jobs: z.array(JobSchema),
  })
  .openapi('Batch', {
    example: {
      id: EXAMPLE_BATCH_ID,
      status: 'processing',
      total: 2,
      jobs: [
        { ...EXAMPLE_JOB, batchId: EXAMPLE_BATCH_ID },
        {
          ...EXAMPLE_JOB,
          id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          batchId: EXAMPLE_BATCH_ID,
          status: 'queued',
          stage: 'queued',
          modelVersion: null,
          startedAt: null,
          completedAt: null,
          expiresAt: null,
          result: null,
          links: {
            self: '/v1/jobs/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
            events: '/v1/jobs/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/events',
            result: '/v1/jobs/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/result',
            cancel: '/v1/jobs/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          },
        },
      ],
    },
  })

export type Batch = z.infer<typeof BatchSchema>
