import { z } from '@hono/zod-openapi'

export const UsageSchema = z
  .object({
    kind: z.enum(['workspace', 'anonymous']).optional(),
    available: z.number().int().optional(),
    held: z.number().int().optional(),
    used: z.number().int().optional(),
    limit: z.number().int().optional(),
    accepted: z.number().int().optional(),
    remaining: z.number().int().optional(),
    periodEndsAt: z.iso.datetime().optional(),
  })
  .openapi('Usage', {
    example: {
      kind: 'workspace',
      limit: 500,
      available: 452,
      held: 2,
      used: 46,
      periodEndsAt: '2026-06-01T00:00:00.000Z',
    },
  })
