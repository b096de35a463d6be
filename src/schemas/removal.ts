/**
 * @module
 * Removal options (SPEC.md §2): a strict object; `threshold` belongs to binary alpha only, and the
 * legacy `format`/`recipe` fields are refused like any other unknown field.
 */
import { z } from '@hono/zod-openapi'
import * as contract from '../contract/options'
import type { SourceSlots } from '../services/job-sources'
import { ONE_SOURCE, SourceUrl, Uuid } from './common'
import { filePart, multipartSchema } from './multipart'

export const AlphaSchema = contract.AlphaSchema.openapi('Alpha', {
  example: { mode: 'binary', threshold: 0.5, feather: 1 },
})

const EXAMPLE_OPTIONS = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const

export const RemovalOptionsSchema = contract.RemovalOptionsSchema.openapi('RemovalOptions', {
  example: EXAMPLE_OPTIONS,
})

export type { RemovalOptions } from '../contract/options'

export const RemovalJsonSchema = z
  .strictObject({
    sourceUrl: SourceUrl.optional(),
    uploadId: Uuid.optional(),
    options: RemovalOptionsSchema,
  })
  .openapi('RemovalRequest', {
    ...ONE_SOURCE,
    example: { sourceUrl: 'https://images.example.com/products/mug.jpg', options: EXAMPLE_OPTIONS },
  })

export const RemovalMultipartSchema = multipartSchema('RemovalMultipart', {
  image: filePart('JPEG, PNG, WebP, AVIF, HEIC or HEIF; ≤ 50 MB, ≤ 25 MP'),
  options: z.string().openapi({ description: 'JSON-encoded RemovalOptions', example: JSON.stringify(EXAMPLE_OPTIONS) }),
})

/** The removal's one image: the JSON body's own `sourceUrl | uploadId`, or the file part `image`. */
export const REMOVAL_SOURCES = { source: { part: 'image' } } as const satisfies SourceSlots
