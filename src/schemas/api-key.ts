import { z } from '@hono/zod-openapi'
import { SCOPES } from '../lib/scopes'

export const MAX_API_KEY_NAME_LENGTH = 80

const DateTime = z.iso.datetime({ offset: true })
const Scope = z.enum(SCOPES)

const EXAMPLE_KEY = {
  id: 'c4e6a8b0-2d4f-4a6c-9e8b-0a2c4e6f8b1d',
  name: 'CI pipeline',
  prefix: 'sk_live_Xq3v',
  scopes: ['images:write', 'jobs:read'],
  createdAt: '2026-05-01T12:00:00.000Z',
  expiresAt: null,
  lastUsedAt: '2026-05-04T09:30:00.000Z',
}

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z
      .string()
      .openapi({ description: 'The first 12 characters of the key, for telling keys apart', example: 'sk_live_Xq3v' }),
    scopes: z.array(z.string()),
    createdAt: DateTime,
    expiresAt: DateTime.nullable().optional(),
    lastUsedAt: DateTime.nullable().optional().openapi({ description: 'Updated at most once a minute' }),
  })
  .openapi('ApiKey', { example: EXAMPLE_KEY })

export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  value: z.string().optional().openapi({
    description:
      'The secret: shown only in the response that created the key, stored only as a hash. Absent from a replay of the same Idempotency-Key (the secret cannot be shown twice)',
  }),
}).openapi('ApiKeyCreated', {
  example: { ...EXAMPLE_KEY, lastUsedAt: null, value: 'sk_live_Xq3vEXAMPLE-only_not-a-real-key_00000000000' },
})

export const ApiKeyListSchema = z
  .object({ keys: z.array(ApiKeySchema) })
  .openapi('ApiKeyList', { example: { keys: [EXAMPLE_KEY] } })

export const ApiKeyCreateSchema = z
  .strictObject({
    name: z.string().max(MAX_API_KEY_NAME_LENGTH).optional().openapi({ example: 'CI pipeline' }),
    scopes: z
      .array(Scope)
      .min(1)
      .optional()
      .openapi({
        description: "Defaults to the caller's scopes; only scopes the caller holds may be given",
        example: ['images:write', 'jobs:read'],
      }),
    expiresAt: DateTime.optional().openapi({
      description:
        "Must be in the future and no later than the calling key's own expiry; omitted, the new key expires with the calling key (never, when called with a session or a key that does not expire)",
      example: '2030-01-01T00:00:00Z',
    }),
  })
  .openapi('ApiKeyCreate', {
    example: { name: 'CI pipeline', scopes: ['images:write', 'jobs:read'], expiresAt: '2030-01-01T00:00:00Z' },
  })

export type ApiKeyCreate = z.infer<typeof ApiKeyCreateSchema>
