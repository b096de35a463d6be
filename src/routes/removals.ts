/**
 * @module
 * POST /v1/removals (SPEC.md §4): JSON {sourceUrl | uploadId, options} or multipart {image, options}.
 * 200 with the finished job when it ends within `Prefer: wait`, else 202 with `Location`.
 */
import { createRoute } from '@hono/zod-openapi'
import { ApiError, errorResponses, problemContent } from '../errors'
import { createRouter, preferWaitSeconds } from '../lib/router'
import { authorize } from '../middleware/auth'
import { IdempotencyHeaders, json, optionalBearer } from '../schemas/common'
import { JobSchema, type Job } from '../schemas/job'
import { RemovalJsonSchema, RemovalMultipartSchema } from '../schemas/removal'
import { requireIdempotencyKey } from '../services/idempotency'
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
  responses: {
    200: json(JobSchema, 'The job finished within the bounded wait'),
    202: {
      ...json(JobSchema, 'Accepted; poll Location or stream its events'),
      headers: { Location: { schema: { type: 'string' } } },
    },
    ...errorResponses,
    402: problemContent('No credits remain'),
    409: problemContent('Idempotency-Key reused with different input'),
    413: problemContent('Over 50 MB or 25 megapixels'),
    415: problemContent('Not a supported image'),
    422: problemContent('sourceUrl targets a prohibited address'),
  },
})

export const removals = createRouter().openapi(createRemoval, async (c) => {
  const headers = c.req.valid('header')
  const idempotencyKey = requireIdempotencyKey(headers['idempotency-key'])
  const waitSeconds = preferWaitSeconds(headers.prefer)
  const contentType = (c.req.header('content-type') ?? '').toLowerCase()
  if (!contentType) throw new ApiError('invalid_input', 'Expected a JSON or multipart/form-data body')
  const input = contentType.startsWith('multipart/')
    ? multipartInput(c.req.valid('form') as Record<string, unknown>)
    : jsonInput(c.req.valid('json') as JsonBody)
  const res = await acceptRemoval(
    { env: c.env, auth: c.get('auth'), requestId: c.get('requestId'), idempotencyKey, waitSeconds },
    input,
  )
  if (res.location) c.header('Location', res.location)
  if (waitSeconds !== null) c.header('Preference-Applied', `wait=${waitSeconds}`)
  const job = JSON.parse(res.body) as Job
  return res.status === 200 ? c.json(job, 200) : c.json(job, 202)
})

type JsonBody = { sourceUrl?: string; uploadId?: string; options: RemovalInput['options'] }

function jsonInput(body: JsonBody): RemovalInput {
  return { source: sourceFromJson(body, { sourceUrl: 'sourceUrl', uploadId: 'uploadId' }), options: body.options }
}

function multipartInput(form: Record<string, unknown>): RemovalInput {
  return { source: sourceFromPart(form.image, 'image'), options: parseOptionsField(form.options) }
}
