/**
 * @module
 * POST /v1/removals (SPEC.md §4): JSON {sourceUrl | uploadId, options} or multipart {image, options}.
 * 200 with the finished job when it ends within `Prefer: wait`, else 202 with `Location`.
 */
import { createRoute } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { acceptedHeaders, acceptStreamed, jobCreatedResponses, jobRequest } from './job-route'
import { IdempotencyHeaders, optionalBearer } from '../schemas/common'
import { documentRoute, partsOf, streamedMultipart } from '../schemas/multipart'
import { RemovalJsonSchema, RemovalMultipartSchema } from '../schemas/removal'
import { jobSourcePrefix, readStagedForm, sourceFromJson, sourceFromPart } from '../services/job-sources'
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

const router = createRouter()
documentRoute(router, createRemoval)

export const removals = router.openapi(streamedMultipart(createRemoval), async (c) => {
  const { ctx, multipart } = jobRequest(c, c.req.valid('header'))
  const accepted = multipart
    ? await acceptStreamed(ctx, (jobId) => multipartInput(c, jobId), acceptRemoval)
    : await acceptRemoval(ctx, jsonInput(c.req.valid('json') as JsonBody))
  acceptedHeaders(c, accepted, ctx.waitSeconds)
  return accepted.finished ? c.json(accepted.job, 200) : c.json(accepted.job, 202)
})

type JsonBody = { sourceUrl?: string; uploadId?: string; options: RemovalInput['options'] }

function jsonInput(body: JsonBody): RemovalInput {
  return { source: sourceFromJson(body, { sourceUrl: 'sourceUrl', uploadId: 'uploadId' }), options: body.options }
}

const PARTS = partsOf(RemovalMultipartSchema)

/** The multipart body, read as a stream: the image goes to R2 (the job's source) as it arrives. */
async function multipartInput(c: Context<AppEnv>, jobId: string): Promise<RemovalInput> {
  const { texts, staged } = await readStagedForm(c.req.raw, c.env.BUCKET, PARTS, () => jobSourcePrefix(jobId))
  const options = parseOptionsField(texts.options)
  return { source: sourceFromPart(staged.image, 'image'), options }
}
