/**
 * @module
 * POST /v1/virtual-try-ons (SPEC.md §4; experimental, for evaluation under a non-commercial
 * licence): JSON {person, garment, options} or multipart {person, garment, options}. 200 with the
 * finished job when it ends within `Prefer: wait`, else 202 with `Location`; then a job like any
 * other (GET, events, cancel, result).
 */
import { createRoute } from '@hono/zod-openapi'
import { TryOnOptionsSchema as TryOnOptionsContract } from '../contract/tryon'
import { parseJsonField } from '../lib/form'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { acceptedHeaders, jobCreatedResponses, jobRequest } from './job-route'
import { IdempotencyHeaders } from '../schemas/common'
import { TryOnJsonSchema, TryOnMultipartSchema } from '../schemas/try-on'
import { sourceFromJson, sourceFromPart } from '../services/job-sources'
import { acceptTryOn, type TryOnInput } from '../services/try-ons'

export const createTryOn = createRoute({
  method: 'post',
  path: '/v1/virtual-try-ons',
  operationId: 'createVirtualTryOn',
  summary: 'Dress a person photo in a garment photo (experimental, non-commercial)',
  tags: ['Processing'],
  security: [{ Bearer: [] }],
  middleware: [authorize('POST /v1/virtual-try-ons')] as const,
  request: {
    headers: IdempotencyHeaders,
    body: {
      required: false,
      content: {
        'application/json': { schema: TryOnJsonSchema },
        'multipart/form-data': { schema: TryOnMultipartSchema },
      },
    },
  },
  responses: jobCreatedResponses({
    tooLarge: 'An image is over 50 MB or 25 megapixels',
    unsupported: 'An image is not a supported format',
    unsafeUrl: 'A sourceUrl targets a prohibited address',
  }),
})

export const tryOns = createRouter().openapi(createTryOn, async (c) => {
  const { ctx, multipart } = jobRequest(c, c.req.valid('header'))
  const input = multipart
    ? multipartInput(c.req.valid('form') as Record<string, unknown>)
    : jsonInput(c.req.valid('json') as JsonBody)
  const accepted = await acceptTryOn(ctx, input)
  acceptedHeaders(c, accepted, ctx.waitSeconds)
  return accepted.finished ? c.json(accepted.job, 200) : c.json(accepted.job, 202)
})

type Source = { sourceUrl?: string; uploadId?: string }
type JsonBody = { person: Source; garment: Source; options: TryOnInput['options'] }

function jsonInput(body: JsonBody): TryOnInput {
  return {
    person: sourceFromJson(body.person, { sourceUrl: 'person.sourceUrl', uploadId: 'person.uploadId' }),
    garment: sourceFromJson(body.garment, { sourceUrl: 'garment.sourceUrl', uploadId: 'garment.uploadId' }),
    options: body.options,
  }
}

function multipartInput(form: Record<string, unknown>): TryOnInput {
  return {
    person: sourceFromPart(form.person, 'person'),
    garment: sourceFromPart(form.garment, 'garment'),
    options: parseJsonField(form.options, TryOnOptionsContract),
  }
}
