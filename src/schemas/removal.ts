/**
 * @module
 * Removal options (SPEC.md §2): a strict object; `threshold` belongs to binary alpha only, and the
 * legacy `format`/`recipe` fields are refused like any other unknown field.
 */
import { z } from '@hono/zod-openapi'
import * as contract from '../contract/options'

export const AlphaSchema = contract.AlphaSchema.openapi('Alpha')

export const RemovalOptionsSchema = contract.RemovalOptionsSchema.openapi('RemovalOptions', {
  example: { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' },
})

export type { RemovalOptions } from '../contract/options'

export const RemovalJsonSchema = z
  .strictObject({
    sourceUrl: z.url({ protocol: /^https?$/ }).optional(),
    uploadId: z.uuid().optional(),
    options: RemovalOptionsSchema,
  })
  .openapi('RemovalRequest', { description: 'Exactly one of sourceUrl or uploadId.' })

// Strict like every multipart body: a part that is not listed is refused, naming it.
export const RemovalMultipartSchema = z
  .strictObject({
    image: z.any().openapi({
      type: 'string',
      format: 'binary',
      description: 'JPEG, PNG, WebP, AVIF, HEIC or HEIF; ≤ 50 MB, ≤ 25 MP',
    }),
    options: z.string().openapi({ description: 'JSON-encoded RemovalOptions' }),
  })
  .openapi('RemovalMultipart')
