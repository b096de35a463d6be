import { z } from '@hono/zod-openapi'
import { SCOPES } from '../services/auth'
import { MAX_API_KEY_NAME_LENGTH } from '../services/api-keys'

const DateTime = z.iso.datetime({ offset: true })
const Scope = z.enum(SCOPES)

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
  .openapi('ApiKey')

export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  value: z.string().openapi({ description: 'The secret: shown only in this response, stored only as a hash' }),
}).openapi('ApiKeyCreated')

export const ApiKeyListSchema = z.object({ keys: z.array(ApiKeySchema) }).openapi('ApiKeyList')

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
      description: 'Must be in the future; omit for a key that does not expire',
    }),
  })
  .openapi('ApiKeyCreate')

export type ApiKeyCreate = z.infer<typeof ApiKeyCreateSchema>
