/**
 * @module
 * POST /v1/virtual-try-ons (SPEC.md §4; experimental, for evaluation under a non-commercial
 * licence): JSON {person, garment, options} or multipart {person, garment, options}. 200 with the
 * finished job when it ends within `Prefer: wait`, else 202 with `Location`; then a job like any
 * other (GET, events, cancel, result).
 */
import { createRoute } from '@hono/zod-openapi'
import { TryOnOptionsSchema as TryOnOptionsContract } from '../contract/tryon'
import { ApiError, errorResponses, problemContent } from '../errors'
import { parseJsonField } from '../lib/form'
import { createRouter, preferWaitSeconds } from '../lib/router'
import { authorize } from '../middleware/auth'
import { IdempotencyHeaders, json } from '../schemas/common'
import { type Job, JobSchema } from '../schemas/job'
import { TryOnJsonSchema, TryOnMultipartSchema } from '../schemas/try-on'
import { requireIdempotencyKey } from '../services/idempotency'
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
  responses: {
    200: json(JobSchema, 'The job finished within the bounded wait'),
    202: {
      ...json(JobSchema, 'Accepted; poll Location or stream its events'),
      headers: { Location: { schema: { type: 'string' } } },
    },
    ...errorResponses,
    402: problemContent('No credits remain'),
    409: problemContent('Idempotency-Key reused with different input'),
    413: problemContent('An image is over 50 MB or 25 megapixels'),
    415: problemContent('An image is not a supported format'),
    422: problemContent('A sourceUrl targets a prohibited address'),
  },
})

export const tryOns = createRouter().openapi(createTryOn, async (c) => {
  const headers = c.req.valid('header')
  const idempotencyKey = requireIdempotencyKey(headers['idempotency-key'])
  const waitSeconds = preferWaitSeconds(headers.prefer)
  const contentType = (c.req.header('content-type') ?? '').toLowerCase()
  if (!contentType) throw new ApiError('invalid_input', 'Expected a JSON or multipart/form-data body')
  const input = contentType.startsWith('multipart/')
    ? multipartInput(c.req.valid('form') as Record<string, unknown>)
    : jsonInput(c.req.valid('json') as JsonBody)
  const res = await acceptTryOn(
    { env: c.env, auth: c.get('auth'), requestId: c.get('requestId'), idempotencyKey, waitSeconds },
    input,
  )
  if (res.location) c.header('Location', res.location)
  if (waitSeconds !== null) c.header('Preference-Applied', `wait=${waitSeconds}`)
  const job = JSON.parse(res.body) as Job
  return res.status === 200 ? c.json(job, 200) : c.json(job, 202)
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
