/**
 * @module
 * POST /v1/virtual-try-ons (SPEC.md §4; experimental, for evaluation under a non-commercial
 * licence): JSON {person, garment, options} or multipart {person, garment, options}. 200 with the
 * finished job when it ends within `Prefer: wait`, else 202 with `Location`; then a job like any
 * other (GET, events, cancel, result).
 */
import { createRoute } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { TryOnOptionsSchema as TryOnOptionsContract } from '../contract/tryon'
import { parseJsonField } from '../lib/form'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { acceptedHeaders, acceptStreamed, jobCreatedResponses, jobRequest } from './job-route'
import { IdempotencyHeaders } from '../schemas/common'
import { documentRoute, partsOf, streamedMultipart } from '../schemas/multipart'
import { TryOnJsonSchema, TryOnMultipartSchema } from '../schemas/try-on'
import { jobSourcePrefix, readStagedForm, sourceFromJson, sourceFromPart } from '../services/job-sources'
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

const router = createRouter()
documentRoute(router, createTryOn)

export const tryOns = router.openapi(streamedMultipart(createTryOn), async (c) => {
  const { ctx, multipart } = jobRequest(c, c.req.valid('header'))
  const accepted = multipart
    ? await acceptStreamed(ctx, (jobId) => multipartInput(c, jobId), acceptTryOn)
    : await acceptTryOn(ctx, jsonInput(c.req.valid('json') as JsonBody))
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

const PARTS = partsOf(TryOnMultipartSchema)

/** The multipart body, read as a stream: each image goes to R2 (the job's sources) as it arrives. */
async function multipartInput(c: Context<AppEnv>, jobId: string): Promise<TryOnInput> {
  const keyOf = (name: string) => `${jobSourcePrefix(jobId)}/${name}`
  const { texts, staged } = await readStagedForm(c.req.raw, c.env.BUCKET, PARTS, keyOf)
  const options = parseJsonField(texts.options, TryOnOptionsContract)
  return {
    person: sourceFromPart(staged.person, 'person'),
    garment: sourceFromPart(staged.garment, 'garment'),
    options,
  }
}
