/**
 * @module
 * Jobs (SPEC.md §4): list, read, cancel, the event stream and the result.
 */
import { createRoute } from '@hono/zod-openapi'
import { ApiError, problemContent } from '../errors'
import { EVENT_TYPES } from '../lib/events'
import { createRouter } from '../lib/router'
import { authorize, resultAccess, resultWorkspace } from '../middleware/auth'
import { IdParams, json, optionalBearer } from '../schemas/common'
import { EVENT_EXAMPLE, eventStream } from '../schemas/events'
import { JobListQuery, JobListSchema, JobSchema, ResultQuery } from '../schemas/job'
import { findJob, findJobById, type JobRow, listJobs } from '../services/job-store'
import { toJob } from '../services/job-view'
import { cancelJob, jobEvents, readResult } from '../services/jobs'

const security = [{ Bearer: [] }]

/** What a job's stream carries: its own events (a batch's completion goes to webhooks). */
const JOB_EVENT_TYPES = EVENT_TYPES.filter((type) => type.startsWith('image.job.'))

/** One event as the stream frames it (SPEC.md §6): id, event type, and the envelope as data. */
const SSE_EXAMPLE = [
  `id: ${EVENT_EXAMPLE.id}`,
  `event: ${EVENT_EXAMPLE.type}`,
  `data: ${JSON.stringify(EVENT_EXAMPLE)}`,
  '',
  '',
].join('\n')

export const list = createRoute({
  method: 'get',
  path: '/v1/jobs',
  operationId: 'listJobs',
  summary: "List the workspace's jobs, newest first",
  tags: ['Jobs'],
  security,
  middleware: [authorize('GET /v1/jobs')] as const,
  request: { query: JobListQuery },
  responses: { 200: json(JobListSchema, 'Jobs, newest first') },
})

export const getOne = createRoute({
  method: 'get',
  path: '/v1/jobs/{id}',
  operationId: 'getJob',
  summary: 'Get a job: status, stage, model version and result',
  tags: ['Jobs'],
  security: optionalBearer,
  middleware: [authorize('GET /v1/jobs/{id}')] as const,
  request: { params: IdParams },
  responses: { 200: json(JobSchema, 'The job') },
})

export const cancel = createRoute({
  method: 'delete',
  path: '/v1/jobs/{id}',
  operationId: 'cancelJob',
  summary: 'Cancel a queued or processing job',
  tags: ['Jobs'],
  security: optionalBearer,
  middleware: [authorize('DELETE /v1/jobs/{id}')] as const,
  request: { params: IdParams },
  responses: { 200: json(JobSchema, 'Canceled, or cancellation requested') },
})

export const events = createRoute({
  method: 'get',
  path: '/v1/jobs/{id}/events',
  operationId: 'streamJobEvents',
  summary: "Stream a job's events (server-sent events)",
  tags: ['Jobs'],
  security: optionalBearer,
  middleware: [authorize('GET /v1/jobs/{id}/events')] as const,
  request: { params: IdParams },
  responses: {
    200: {
      description: 'Server-sent events; reconnect with Last-Event-ID',
      content: eventStream(JOB_EVENT_TYPES, SSE_EXAMPLE),
    },
  },
})

export const result = createRoute({
  method: 'get',
  path: '/v1/jobs/{id}/result',
  operationId: 'getJobResult',
  summary: "Download a job's result image",
  tags: ['Jobs'],
  security: optionalBearer,
  middleware: [resultAccess('GET /v1/jobs/{id}/result')] as const,
  request: { params: IdParams, query: ResultQuery },
  responses: {
    200: {
      description: 'The result bytes; Content-Type is the result format',
      content: {
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
        'image/png': { schema: { type: 'string', format: 'binary' } },
      },
    },
    410: problemContent('The result bytes expired (kept 24 hours after completion)'),
  },
})

export const jobs = createRouter()
  .openapi(list, async (c) => {
    const page = await listJobs(c.env.DB, c.get('auth').workspaceId, c.req.valid('query'))
    const items = await Promise.all(page.rows.map((row) => toJob(row, c.env.RESULT_SIGNING_KEY)))
    return c.json({ jobs: items, nextCursor: page.nextCursor }, 200)
  })
  .openapi(getOne, async (c) => {
    const row = await findJob(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    return c.json(await toJob(row, c.env.RESULT_SIGNING_KEY), 200)
  })
  .openapi(cancel, async (c) => {
    return c.json(await cancelJob(c.env, c.get('auth').workspaceId, c.req.valid('param').id), 200)
  })
  .openapi(events, async (c) => {
    const stream = await jobEvents(
      c.env,
      c.get('auth').workspaceId,
      c.req.valid('param').id,
      c.req.header('last-event-id'),
    )
    return stream as unknown as Response
  })
  .openapi(result, async (c) => {
    const { id } = c.req.valid('param')
    const workspaceId = resultWorkspace(c)
    const row: JobRow | null = workspaceId ? await findJob(c.env.DB, workspaceId, id) : await findJobById(c.env.DB, id)
    if (!row) throw new ApiError('job_not_found', `No job ${id}`)
    const stored = await readResult(c.env, row, `job ${id}`)
    return c.body(stored.body, 200, stored.headers)
  })
