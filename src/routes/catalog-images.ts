/**
 * @module
 * Catalog images (SPEC.md §4 Catalog images): `POST /v1/catalog-images` makes a product-only PNG
 * from one to four references while the client waits (201 `image/png`, `Location`,
 * `X-Catalog-Image-Id`, `X-Generation-Seed`); `GET /v1/catalog-images/{id}` reads it back for the
 * owning workspace for 24 hours; `GET /v1/catalog-images` lists the workspace's, newest first.
 */
import { createRoute } from '@hono/zod-openapi'
import { MAX_SEED, referenceField } from '../contract/catalog'
import { problemContent } from '../errors'
import { readStreamedForm } from '../lib/multipart-stream'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { inferenceCall } from '../middleware/trace'
import { CatalogImageListQuery, CatalogImageListSchema, CatalogMultipartSchema } from '../schemas/catalog'
import { IdParams, json, OptionalIdempotencyHeaders } from '../schemas/common'
import { processorUnavailable } from '../schemas/problems'
import { documentRoute, partsOf, streamedMultipart } from '../schemas/multipart'
import { listCatalogImages, makeCatalogImageOnce, readCatalogImage } from '../services/catalog'
import { StagedPart } from '../services/sources'

const security = [{ Bearer: [] }]
const tags = ['Catalog images']
const png = { 'image/png': { schema: { type: 'string' as const, format: 'binary' } } }
const headers = {
  'X-Catalog-Image-Id': { schema: { type: 'string' as const, format: 'uuid' } },
  'X-Generation-Seed': {
    schema: { type: 'integer' as const, minimum: 0, maximum: MAX_SEED },
    description: 'Send it as `seed` to make the same image again',
  },
}

const create = createRoute({
  method: 'post',
  path: '/v1/catalog-images',
  operationId: 'createCatalogImage',
  summary: 'Make a marketplace-ready product photo from one to four reference shots',
  description:
    'Needs the `images:write` scope. Synchronous, not a job: the PNG is made while the client waits, under a hold of one credit that is charged when the image is stored and released when it fails (402 `quota_exhausted` when no credit is available). Sending `X-Generation-Seed` back as `seed` with the same references and fields makes the same image again, and a retry with the same `Idempotency-Key` returns the first image (same id, seed and bytes) without charging again.',
  tags,
  security,
  middleware: [authorize('POST /v1/catalog-images')] as const,
  request: {
    headers: OptionalIdempotencyHeaders,
    body: { required: true, content: { 'multipart/form-data': { schema: CatalogMultipartSchema } } },
  },
  responses: {
    201: {
      description: 'The catalog image (kept 24 hours at Location)',
      content: png,
      headers: { Location: { schema: { type: 'string' as const } }, ...headers },
    },
    402: problemContent('No credits remain (`quota_exhausted`)'),
    413: problemContent('A reference is over 50 MB or 25 megapixels'),
    415: problemContent('A reference is not a supported image'),
    503: processorUnavailable('make the image'),
  },
})

const list = createRoute({
  method: 'get',
  path: '/v1/catalog-images',
  operationId: 'listCatalogImages',
  summary: "List the workspace's catalog images, newest first",
  description:
    'Needs the `jobs:read` scope. Lists the images that were made (failed calls are not listed) with the options and seed each was made with; pages with `limit` and `cursor` (`nextCursor`). An image past retention stays listed with `expired: true`, and its `links.self` then answers 410 `asset_expired`.',
  tags,
  security,
  middleware: [authorize('GET /v1/catalog-images')] as const,
  request: { query: CatalogImageListQuery },
  responses: { 200: json(CatalogImageListSchema, 'Catalog images, newest first') },
})

const getOne = createRoute({
  method: 'get',
  path: '/v1/catalog-images/{id}',
  operationId: 'getCatalogImage',
  summary: 'Download a catalog image made by this workspace',
  description:
    'Needs the `jobs:read` scope. Answers the PNG with its `X-Catalog-Image-Id` and `X-Generation-Seed`; an image of another workspace is 404 `catalog_image_not_found`, and one past retention is 410 `asset_expired`.',
  tags,
  security,
  middleware: [authorize('GET /v1/catalog-images/{id}')] as const,
  request: { params: IdParams },
  responses: {
    200: { description: 'The catalog image', content: png, headers },
    410: problemContent('Past the 24-hour retention (asset_expired)'),
  },
})

const router = createRouter()
documentRoute(router, create)

export const catalogImages = router
  .openapi(streamedMultipart(create), async (c) => {
    const read = (prefix: string) => readForm(c.req.raw, c.env.BUCKET, prefix)
    const key = c.req.valid('header')['idempotency-key']
    const made = await makeCatalogImageOnce(c.env, c.get('auth'), read, key, inferenceCall(c))
    return c.body(made.image.body, 201, {
      ...made.image.headers,
      location: `/v1/catalog-images/${made.id}`,
      'x-catalog-image-id': made.id,
      'x-generation-seed': String(made.seed),
    })
  })
  .openapi(list, async (c) => {
    return c.json(await listCatalogImages(c.env.DB, c.get('auth').workspaceId, c.req.valid('query')), 200)
  })
  .openapi(getOne, async (c) => {
    const { id } = c.req.valid('param')
    const { stored, seed } = await readCatalogImage(c.env, c.get('auth').workspaceId, id)
    return c.body(stored.body, 200, {
      ...stored.headers,
      'x-catalog-image-id': id,
      'x-generation-seed': String(seed),
    })
  })

const PARTS = partsOf(CatalogMultipartSchema)

/**
 * The multipart body, read as a stream: text parts as strings, each reference streamed into R2
 * under `prefix` as it arrives (`StagedPart`: the Worker holds at most one 5 MiB part of it), in
 * the order sent.
 */
async function readForm(request: Request, bucket: R2Bucket, prefix: string): Promise<Record<string, unknown>> {
  const staged: StagedPart[] = []
  const openFile = (_name: string, index: number) => {
    staged[index] = new StagedPart(bucket, `${prefix}${index}`, referenceField(index))
    return staged[index]
  }
  const { texts } = await readStreamedForm(request, { ...PARTS, openFile })
  return { ...texts, ...(staged.length ? { references: staged } : {}) }
}
