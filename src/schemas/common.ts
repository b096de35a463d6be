import { z } from '@hono/zod-openapi'

export const Uuid = z.uuid()

export const IdParams = z.object({
  id: Uuid.openapi({ param: { name: 'id', in: 'path' }, example: '0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11' }),
})

export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({
      param: { name: 'Idempotency-Key', in: 'header', required: true },
      description: 'Required. Same key and same input replays the first response for 24 hours.',
    }),
  prefer: z
    .string()
    .optional()
    .openapi({ param: { name: 'Prefer', in: 'header' }, example: 'wait=8' }),
})

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
})
