/**
 * @module
 * Batches (SPEC.md §4): POST /v1/batches queues 1–100 removals from ready uploads atomically;
 * GET /v1/batches/{id} shows progress and the child jobs.
 */
import { createRoute } from '@hono/zod-openapi'
import { problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { BatchRequestSchema, BatchSchema } from '../schemas/batch'
import { IdempotencyHeaders, IdParams, json } from '../schemas/common'
import { processorUnavailable } from '../schemas/problems'
import { acceptBatch, getBatch } from '../services/batches'
import { requireIdempotencyKey } from '../services/idempotency'
import { acceptContext } from './job-route'

const security = [{ Bearer: [] }]

export const create = createRoute({
  method: 'post',
  path: '/v1/batches',
  operationId: 'createBatch',
  summary: 'Queue background removal for up to 100 uploads at once',
  tags: ['Batches'],
  security,
  middleware: [authorize('POST /v1/batches')] as const,
  request: {
    headers: IdempotencyHeaders.pick({ 'idempotency-key': true }),
    body: { required: true, content: { 'application/json': { schema: BatchRequestSchema } } },
  },
  responses: {
    202: {
      ...json(BatchSchema, 'Queued: every job with its credit hold'),
      headers: { Location: { schema: { type: 'string' } } },
    },
    402: problemContent('Credits cannot cover every image; nothing was queued'),
    503: processorUnavailable('take the jobs'),
  },
})

export const getOne = createRoute({
  method: 'get',
  path: '/v1/batches/{id}',
  operationId: 'getBatch',
  summary: "Get a batch's progress and its jobs",
  tags: ['Batches'],
  security,
  middleware: [authorize('GET /v1/batches/{id}')] as const,
  request: { params: IdParams },
  responses: { 200: json(BatchSchema, 'Progress and child jobs') },
})

export const batches = createRouter()
  .openapi(create, async (c) => {
    const idempotencyKey = requireIdempotencyKey(c.req.valid('header')['idempotency-key'])
    const accepted = await acceptBatch(acceptContext(c, idempotencyKey), c.req.valid('json'))
    c.header('Location', accepted.location)
    return c.json(accepted.job, 202)
  })
  .openapi(getOne, async (c) => c.json(await getBatch(c.env, c.get('auth').workspaceId, c.req.valid('param').id), 200))
