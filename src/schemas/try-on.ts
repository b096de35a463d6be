/**
 * @module
 * Virtual try-on requests (SPEC.md §2 Source, Virtual try-on options; §4 POST /v1/virtual-try-ons):
 * JSON with two Sources and the options, or multipart with `person`, `garment` and `options` and
 * nothing else. Strict everywhere.
 */
import { z } from '@hono/zod-openapi'
import * as contract from '../contract/tryon'
import type { SourceSlots } from '../services/job-sources'
import { ONE_SOURCE, SourceUrl, Uuid } from './common'
import { filePart, multipartSchema } from './multipart'

const EXAMPLE_OPTIONS = { category: 'upper_body' as const, seed: 42 }

export const TryOnOptionsSchema = contract.TryOnOptionsSchema.openapi('TryOnOptions', { example: EXAMPLE_OPTIONS })

/** Exactly one of `sourceUrl` or `uploadId` (checked in the handler, naming the member). */
export const SourceSchema = z
  .strictObject({
    sourceUrl: SourceUrl.optional(),
    uploadId: Uuid.optional(),
  })
  .openapi('Source', {
    ...ONE_SOURCE,
    example: { uploadId: '5b0e8c1a-7d2f-4e3b-9a6c-1f2e3d4c5b6a' },
  })

export const TryOnJsonSchema = z
  .strictObject({ person: SourceSchema, garment: SourceSchema, options: TryOnOptionsSchema })
  .openapi('TryOnRequest', {
    example: {
      person: { uploadId: '5b0e8c1a-7d2f-4e3b-9a6c-1f2e3d4c5b6a' },
      garment: { sourceUrl: 'https://images.example.com/shirts/striped.png' },
      options: EXAMPLE_OPTIONS,
    },
  })

export const TryOnMultipartSchema = multipartSchema('TryOnMultipart', {
  person: filePart('A photo of a person, upright; JPEG, PNG, WebP, AVIF, HEIC or HEIF; ≤ 50 MB, ≤ 25 MP'),
  garment: filePart('A photo of the garment (flat lay or product shot); same limits'),
  // A JSON part (the route's `encoding` says application/json): a generated client sends the object it is given.
  options: TryOnOptionsSchema,
})

/** The try-on's two images: each a JSON member holding a Source, or a file part of the same name. */
export const TRY_ON_SOURCES = {
  person: { member: 'person', part: 'person' },
  garment: { member: 'garment', part: 'garment' },
} as const satisfies SourceSlots
