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
      // Optional in the schema so a missing key is our own 400 with field Idempotency-Key.
      param: { in: 'header' },
      description: 'Idempotency-Key (required): the same key and input replays the first response for 24 hours.',
    }),
  prefer: z
    .string()
    .optional()
    .openapi({ param: { in: 'header' }, example: 'wait=8', description: 'wait=N waits up to N (capped at 8) seconds' }),
})

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
})

/** An API key or session, or none at all (anonymous-capable routes). */
export const optionalBearer: Record<string, string[]>[] = [{ Bearer: [] }, {}]
