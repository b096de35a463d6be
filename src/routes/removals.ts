/**
 * @module
 * POST /v1/removals (SPEC.md §4): JSON {sourceUrl | uploadId, options} or multipart {image, options}.
 * 200 with the finished job when it ends within `Prefer: wait`, else 202 with `Location`.
 */
import { createRoute } from '@hono/zod-openapi'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { acceptedHeaders, jobCreatedResponses, jobRequest } from './job-route'
import { IdempotencyHeaders, optionalBearer } from '../schemas/common'
import { RemovalJsonSchema, RemovalMultipartSchema } from '../schemas/removal'
import { sourceFromJson, sourceFromPart } from '../services/job-sources'
import { acceptRemoval, parseOptionsField, type RemovalInput } from '../services/removals'

export const createRemoval = createRoute({
  method: 'post',
  path: '/v1/removals',
  operationId: 'createRemoval',
  summary: 'Remove the background of an image',
  tags: ['Processing'],
  security: optionalBearer,
  middleware: [authorize('POST /v1/removals')] as const,
  request: {
    headers: IdempotencyHeaders,
    // Not `required`: zod-openapi would then run both validators on every request. The media-type
    // gate still refuses other types, and an absent body is refused in the handler.
    body: {
      required: false,
      content: {
        'application/json': { schema: RemovalJsonSchema },
        'multipart/form-data': { schema: RemovalMultipartSchema },
      },
    },
  },
  responses: jobCreatedResponses({
    tooLarge: 'Over 50 MB or 25 megapixels',
    unsupported: 'Not a supported image',
    unsafeUrl: 'sourceUrl targets a prohibited address',
  }),
})

export const removals = createRouter().openapi(createRemoval, async (c) => {
  const { ctx, multipart } = jobRequest(c, c.req.valid('header'))
  const input = multipart
    ? multipartInput(c.req.valid('form') as Record<string, unknown>)
    : jsonInput(c.req.valid('json') as JsonBody)
  const accepted = await acceptRemoval(ctx, input)
  acceptedHeaders(c, accepted, ctx.waitSeconds)
  return accepted.finished ? c.json(accepted.job, 200) : c.json(accepted.job, 202)
})

type JsonBody = { sourceUrl?: string; uploadId?: string; options: RemovalInput['options'] }

function jsonInput(body: JsonBody): RemovalInput {
  return { source: sourceFromJson(body, { sourceUrl: 'sourceUrl', uploadId: 'uploadId' }), options: body.options }
}

function multipartInput(form: Record<string, unknown>): RemovalInput {
  return { source: sourceFromPart(form.image, 'image'), options: parseOptionsField(form.options) }
}
