/**
 * @module
 * POST /v1/removals (SPEC.md §4): JSON {sourceUrl | uploadId, options} or multipart {image, options}.
 * 200 with the finished job when it ends within `Prefer: wait`, else 202 with `Location`.
 */
import { optionalBearer } from '../schemas/common'
import { REMOVAL_SOURCES, RemovalJsonSchema, RemovalMultipartSchema } from '../schemas/removal'
import { acceptRemoval } from '../services/removals'
import { jobRoute } from './job-route'

export const removals = jobRoute({
  path: '/v1/removals',
  operationId: 'createRemoval',
  summary: 'Remove the background of an image',
  security: optionalBearer,
  body: { json: RemovalJsonSchema, multipart: RemovalMultipartSchema, sources: REMOVAL_SOURCES },
  images: {
    tooLarge: 'Over 50 MB or 25 megapixels',
    unsupported: 'Not a supported image',
    unsafeUrl: 'sourceUrl targets a prohibited address',
  },
  accept: acceptRemoval,
})
