/**
 * @module
 * A project's refinements and exports (SPEC.md §4 Projects and editing; DESIGN.md §3 Refinements,
 * Exports): both queue internal jobs on the job runner and cost no credit. A refinement answers
 * 202 and ends as a new revision; an export answers 201 when done within `Prefer: wait` (8 s by
 * default), else 202, and its result is read like a job's.
 */
import { createRoute } from '@hono/zod-openapi'
import { problemContent } from '../errors'
import { createRouter, preferWaitSeconds } from '../lib/router'
import { authorize, resultAccess, resultWorkspace } from '../middleware/auth'
import {
  IDEMPOTENCY_CONFLICT,
  IdParams,
  json,
  OptionalIdempotencyHeaders,
  OptionalIdempotencyPreferHeaders,
  optionalBearer,
  Uuid,
} from '../schemas/common'
import { processorUnavailable } from '../schemas/problems'
import { ExportCreateSchema, ExportSchema, RefinementCreateSchema, RefinementSchema } from '../schemas/project'
import { findExport, findExportById, toExport } from '../services/exports'
import { readResult } from '../services/jobs'
import { acceptExport, acceptRefinement, DEFAULT_EXPORT_WAIT_SECONDS } from '../services/project-edits'
import { findProject, REFINEMENTS_PER_PROJECT } from '../services/projects'
import { findRefinement, toRefinement } from '../services/refinements'
import { acceptContext, acceptedHeaders } from './job-route'
import { ResultQuery } from '../schemas/job'

const security = [{ Bearer: [] }]
const tags = ['Projects']

const RefinementParams = IdParams.extend({
  refinementId: Uuid.openapi({
    param: { name: 'refinementId', in: 'path' },
    example: '3c4d5e6f-7a8b-4c9d-8e1f-2a3b4c5d6e7f',
  }),
})
const ExportParams = IdParams.extend({
  exportId: Uuid.openapi({ param: { name: 'exportId', in: 'path' }, example: '4d5e6f7a-8b9c-4d0e-9f2a-3b4c5d6e7f80' }),
})
const Location = { Location: { schema: { type: 'string' as const } } }

const createRefinement = createRoute({
  method: 'post',
  path: '/v1/projects/{id}/refinements',
  operationId: 'createRefinement',
  summary: 'Refine the newest revision inside a box and/or around labelled points',
  description: `Needs the \`images:write\` scope. Answers 202 at once: the refinement runs as a job that takes one of the workspace’s slots and holds no credit; when it ends, \`image.refinement.completed.v1\` goes to the project’s event stream and webhooks, and on success \`revisionId\` names the new revision. A stale \`baseRevisionId\` is 409 \`revision_conflict\` (a refinement whose base is overtaken while it is queued fails with that code), and a project may have at most ${REFINEMENTS_PER_PROJECT} refinements, not counting failed and canceled ones: the next is 429 \`rate_limit_exceeded\`.`,
  tags,
  security,
  middleware: [authorize('POST /v1/projects/{id}/refinements')] as const,
  request: {
    params: IdParams,
    headers: OptionalIdempotencyHeaders,
    body: { required: true, content: { 'application/json': { schema: RefinementCreateSchema } } },
  },
  responses: {
    202: {
      ...json(
        RefinementSchema,
        'Queued; it ends as a new revision (a replay of the same Idempotency-Key: that refinement, as it is now)',
      ),
      headers: Location,
    },
    409: problemContent(`baseRevisionId is not the newest revision (revision_conflict), or ${IDEMPOTENCY_CONFLICT}`),
    429: problemContent('The project has used its 20 refinements, or the request rate is exceeded'),
    503: processorUnavailable('take the refinement'),
  },
})

const getRefinement = createRoute({
  method: 'get',
  path: '/v1/projects/{id}/refinements/{refinementId}',
  operationId: 'getRefinement',
  summary: 'Get a refinement',
  description:
    'Needs the `jobs:read` scope. `status` is that of the refinement’s job; once it has succeeded `revisionId` names the revision it made, and a failed one carries `error` (`revision_conflict` when another edit came after its base while it was queued).',
  tags,
  security,
  middleware: [authorize('GET /v1/projects/{id}/refinements/{refinementId}')] as const,
  request: { params: RefinementParams },
  responses: { 200: json(RefinementSchema, 'The refinement') },
})

const createExport = createRoute({
  method: 'post',
  path: '/v1/projects/{id}/exports',
  operationId: 'createExport',
  summary: 'Render a revision as png, webp, jpeg, zip or psd',
  description: `Needs the \`images:write\` scope. Renders \`revisionId\` (default: the current revision) with \`recipe\` (default: the revision’s own) as a job that holds no credit, waiting up to the \`Prefer: wait\` seconds (${DEFAULT_EXPORT_WAIT_SECONDS} without it): 201 with the export once it has ended (check \`status\`: it may have failed), else 202, to poll at \`Location\` or to follow through \`image.export.completed.v1\` on the project’s event stream. A recipe whose output is sure to be over the size limit is 413 \`image_too_large\` at once, and a retry with the same \`Idempotency-Key\` returns the same export.`,
  tags,
  security,
  middleware: [authorize('POST /v1/projects/{id}/exports')] as const,
  request: {
    params: IdParams,
    headers: OptionalIdempotencyPreferHeaders,
    body: { required: true, content: { 'application/json': { schema: ExportCreateSchema } } },
  },
  responses: {
    201: {
      ...json(ExportSchema, 'Rendered within the bounded wait (a replay of the same Idempotency-Key: that export)'),
      headers: Location,
    },
    202: { ...json(ExportSchema, 'Accepted; poll Location or watch the project’s events'), headers: Location },
    409: problemContent(`Conflict: ${IDEMPOTENCY_CONFLICT}`),
    413: problemContent(
      'The recipe puts the output over the size limit (`image_too_large`), or a JSON body over 1 MiB',
    ),
    503: processorUnavailable('take the export'),
  },
})

const getExport = createRoute({
  method: 'get',
  path: '/v1/projects/{id}/exports/{exportId}',
  operationId: 'getExport',
  summary: 'Get an export and its signed result URL',
  description:
    'Needs the `jobs:read` scope. Once the export has succeeded, `result.url` is a signed path to its bytes that works without an API key until `result.expiresAt`, signed afresh on each read. `result` is null before that and once the bytes are past retention (`expiresAt`), when the download answers 410 `asset_expired`.',
  tags,
  security,
  middleware: [authorize('GET /v1/projects/{id}/exports/{exportId}')] as const,
  request: { params: ExportParams },
  responses: { 200: json(ExportSchema, 'The export') },
})

const exportResult = createRoute({
  method: 'get',
  path: '/v1/projects/{id}/exports/{exportId}/result',
  operationId: 'getExportResult',
  summary: "Download an export's bytes",
  description:
    'Needs the `jobs:read` scope, or no credential when called with the `exp` and `sig` of a signed `result.url` (a bad or expired signature is 401 `invalid_api_key`: read the export again for a fresh URL). An export that has not succeeded is 404 `export_not_found`; one past retention is 410 `asset_expired` while its metadata remains.',
  tags,
  security: optionalBearer,
  middleware: [resultAccess('GET /v1/projects/{id}/exports/{exportId}/result')] as const,
  request: { params: ExportParams, query: ResultQuery },
  responses: {
    200: {
      description: 'The rendered file; Content-Type is the format’s',
      content: {
        'image/png': { schema: { type: 'string', format: 'binary' } },
        'image/webp': { schema: { type: 'string', format: 'binary' } },
        'image/jpeg': { schema: { type: 'string', format: 'binary' } },
        'application/zip': { schema: { type: 'string', format: 'binary' } },
        'image/vnd.adobe.photoshop': { schema: { type: 'string', format: 'binary' } },
      },
    },
    410: problemContent('The bytes expired (kept 24 hours after completion)'),
  },
})

export const projectEdits = createRouter()
  .openapi(createRefinement, async (c) => {
    const project = await findProject(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    const ctx = acceptContext(c, c.req.valid('header')['idempotency-key'], null)
    const accepted = await acceptRefinement(ctx, project, c.req.valid('json'))
    c.header('Location', accepted.location)
    return c.json(accepted.job, 202)
  })
  .openapi(getRefinement, async (c) => {
    const { id, refinementId } = c.req.valid('param')
    const row = await findRefinement(c.env.DB, c.get('auth').workspaceId, id, refinementId)
    return c.json(await toRefinement(c.env.DB, row), 200)
  })
  .openapi(createExport, async (c) => {
    const project = await findProject(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    const headers = c.req.valid('header')
    const prefer = preferWaitSeconds(headers.prefer)
    const ctx = acceptContext(c, headers['idempotency-key'], prefer ?? DEFAULT_EXPORT_WAIT_SECONDS)
    const accepted = await acceptExport(ctx, project, c.req.valid('json'))
    acceptedHeaders(c, accepted, prefer)
    return accepted.finished ? c.json(accepted.job, 201) : c.json(accepted.job, 202)
  })
  .openapi(getExport, async (c) => {
    const { id, exportId } = c.req.valid('param')
    const row = await findExport(c.env.DB, c.get('auth').workspaceId, id, exportId)
    return c.json(await toExport(row, c.env.RESULT_SIGNING_KEY), 200)
  })
  .openapi(exportResult, async (c) => {
    const { id, exportId } = c.req.valid('param')
    const workspaceId = resultWorkspace(c)
    const row = workspaceId
      ? await findExport(c.env.DB, workspaceId, id, exportId)
      : await findExportById(c.env.DB, id, exportId)
    const stored = await readResult(c.env, row, `export ${exportId}`)
    return c.body(stored.body, 200, stored.headers)
  })
