/**
 * @module
 * Uploads (SPEC.md §4): POST /v1/uploads, PUT /v1/uploads/{id}/content, POST /v1/uploads/{id}/complete.
 */
import { createRoute } from '@hono/zod-openapi'
import { problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { inferenceCall } from '../middleware/trace'
import { IdParams, json } from '../schemas/common'
import { processorUnavailable } from '../schemas/problems'
import { RETRY_EXTENSION, type RetryRule } from '../schemas/retry'
import { UPLOAD_CONTENT_TYPES, UploadRequestSchema, UploadSchema } from '../schemas/upload'
import { completeUpload, createUpload, putUploadContent } from '../services/uploads'

const security = [{ Bearer: [] }]
const binary = { schema: { type: 'string' as const, format: 'binary' } }

export const create = createRoute({
  method: 'post',
  path: '/v1/uploads',
  operationId: 'createUpload',
  summary: 'Reserve an upload and get the URL to PUT its bytes to',
  tags: ['Uploads'],
  security,
  middleware: [authorize('POST /v1/uploads')] as const,
  request: { body: { required: false, content: { 'application/json': { schema: UploadRequestSchema } } } },
  responses: { 201: json(UploadSchema, 'Reserved; PUT the bytes to uploadUrl') },
})

export const putContent = createRoute({
  method: 'put',
  path: '/v1/uploads/{id}/content',
  operationId: 'putUploadContent',
  summary: "Send an upload's image bytes",
  tags: ['Uploads'],
  security,
  middleware: [authorize('PUT /v1/uploads/{id}/content')] as const,
  request: {
    params: IdParams,
    body: {
      required: true,
      // The accepted types, listed once (`putUploadContent` refuses the rest with 415).
      content: Object.fromEntries(UPLOAD_CONTENT_TYPES.map((type) => [type, binary])),
    },
  },
  responses: {
    204: { description: 'Stored' },
    413: problemContent('Over 50 MB or 25 megapixels'),
    415: problemContent(
      'Content-Type not octet-stream or an image type, or not a JPEG, PNG, WebP, AVIF, HEIC or HEIF image',
    ),
  },
})

export const complete = createRoute({
  method: 'post',
  path: '/v1/uploads/{id}/complete',
  operationId: 'completeUpload',
  summary: 'Verify an uploaded image and mark it ready',
  tags: ['Uploads'],
  security,
  // Safe to repeat without a key: a ready upload is answered as it is (pending → ready once).
  [RETRY_EXTENSION]: 'safe' satisfies RetryRule,
  middleware: [authorize('POST /v1/uploads/{id}/complete')] as const,
  request: { params: IdParams },
  responses: {
    200: json(UploadSchema, 'Verified and ready'),
    413: problemContent('Over 25 megapixels'),
    415: problemContent('Not a supported image'),
    503: processorUnavailable('inspect the image'),
  },
})

export const uploads = createRouter()
  .openapi(create, async (c) => {
    // No Location: an upload has no resource of its own to read, only its content and complete paths.
    const upload = await createUpload(c.env, c.get('auth').workspaceId, c.req.valid('json').contentType)
    return c.json(upload, 201)
  })
  .openapi(putContent, async (c) => {
    const { id } = c.req.valid('param')
    await putUploadContent(c.env, c.get('auth').workspaceId, id, c.req.raw.body, {
      contentLength: c.req.header('content-length'),
      contentType: c.req.header('content-type'),
    })
    return c.body(null, 204)
  })
  .openapi(complete, async (c) => {
    const { id } = c.req.valid('param')
    return c.json(await completeUpload(c.env, c.get('auth').workspaceId, id, inferenceCall(c)), 200)
  })
