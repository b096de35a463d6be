import { z } from '@hono/zod-openapi'
import { JobSchema } from './job'
import { RemovalOptionsSchema } from './removal'

export const MAX_BATCH_SIZE = 100

export const BatchRequestSchema = z
  .strictObject({
    uploadIds: z.array(z.uuid()).min(1).max(MAX_BATCH_SIZE),
    options: RemovalOptionsSchema,
  })
  .openapi('BatchRequest')

export const BatchSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(['processing', 'complete']),
    total: z.number().int(),
    jobs: z.array(JobSchema),
  })
  .openapi('Batch')

export type Batch = z.infer<typeof BatchSchema>
