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

const EXAMPLE_OPTIONS = contract.DEFAULT_REMOVAL_OPTIONS

export const RemovalOptionsSchema = contract.RemovalOptionsSchema.openapi('RemovalOptions', {
  description: 'Every field has its default: `{}` (or no options at all) is a balanced raw-alpha cutout.',
  example: EXAMPLE_OPTIONS,
})

/** A request's `options`: left out, every default applies. */
const Options = RemovalOptionsSchema.default(contract.DEFAULT_REMOVAL_OPTIONS)

export type { RemovalOptions } from '../contract/options'

export const RemovalJsonSchema = z
  .strictObject({
    sourceUrl: SourceUrl.optional(),
    uploadId: Uuid.optional(),
    options: Options,
  })
  .openapi('RemovalRequest', {
    ...ONE_SOURCE,
    example: { sourceUrl: 'https://images.example.com/products/mug.jpg', options: EXAMPLE_OPTIONS },
  })

export const RemovalMultipartSchema = multipartSchema('RemovalMultipart', {
  image: filePart('JPEG, PNG, WebP, AVIF, HEIC or HEIF; ≤ 50 MB, ≤ 25 MP'),
  // A JSON part (the route's `encoding` says application/json): a generated client sends the object it is given.
  options: Options,
})

/** The removal's one image: the JSON body's own `sourceUrl | uploadId`, or the file part `image`. */
export const REMOVAL_SOURCES = { source: { part: 'image' } } as const satisfies SourceSlots
