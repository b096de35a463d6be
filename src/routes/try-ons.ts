/**
 * @module
 * POST /v1/virtual-try-ons (SPEC.md §4; experimental, for evaluation under a non-commercial
 * licence): JSON {person, garment, options} or multipart {person, garment, options}. 200 with the
 * finished job when it ends within `Prefer: wait`, else 202 with `Location`; then a job like any
 * other (GET, events, cancel, result).
 */
import { TRY_ON_SOURCES, TryOnJsonSchema, TryOnMultipartSchema } from '../schemas/try-on'
import { acceptTryOn } from '../services/try-ons'
import { jobRoute } from './job-route'

export const tryOns = jobRoute({
  path: '/v1/virtual-try-ons',
  operationId: 'createVirtualTryOn',
  summary: 'Dress a person photo in a garment photo (experimental, non-commercial)',
  security: [{ Bearer: [] }],
  body: { json: TryOnJsonSchema, multipart: TryOnMultipartSchema, sources: TRY_ON_SOURCES },
  images: {
    tooLarge: 'An image is over 50 MB or 25 megapixels',
    unsupported: 'An image is not a supported format',
    unsafeUrl: 'A sourceUrl targets a prohibited address',
  },
  accept: acceptTryOn,
})
