/**
 * @module
 * Projects and revisions (SPEC.md §4 Projects and editing; DESIGN.md §3 Projects): a project from
 * a succeeded removal, its immutable revisions (strokes over the newest one, 409 on a stale base)
 * and their masks, and the project's event stream. Sign-in (a key or session) is required.
 */
import { createRoute } from '@hono/zod-openapi'
import { problemContent } from '../errors'
import { PROJECT_EVENT_TYPES } from '../lib/events'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { inferenceCall } from '../middleware/trace'
import { eventStream } from '../schemas/events'
import { IDEMPOTENCY_CONFLICT, IdParams, json, OptionalIdempotencyHeaders, Uuid } from '../schemas/common'
import {
  ProjectCreateSchema,
  ProjectListQuery,
  ProjectListSchema,
  ProjectSchema,
  RevisionCreateSchema,
  RevisionListSchema,
  RevisionSchema,
} from '../schemas/project'
import { processorUnavailable } from '../schemas/problems'
import { createOnce } from '../services/idempotency'
import { createProject, deleteProject, findProject, listProjects, projectEvents, toProject } from '../services/projects'
import { createRevision, findRevision, listRevisions, readRevisionMask, toRevision } from '../services/revisions'

const security = [{ Bearer: [] }]
const tags = ['Projects']

export const RevisionParams = IdParams.extend({
  revisionId: Uuid.openapi({
    param: { name: 'revisionId', in: 'path' },
    example: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e',
  }),
})

const create = createRoute({
  method: 'post',
  path: '/v1/projects',
  operationId: 'createProject',
  summary: 'Start an editing project from a succeeded removal job',
  description:
    'Needs the `images:write` scope. Made at once, not as a job: the removal’s source is copied and its result becomes revision 1’s mask, so the project keeps them until it is deleted instead of losing them with the job’s result. A job that is not a succeeded removal is 400 `invalid_input` (field `jobId`), one whose result or source is past retention is 410 `asset_expired`, and a retry with the same `Idempotency-Key` returns the same project.',
  tags,
  security,
  middleware: [authorize('POST /v1/projects')] as const,
  request: {
    headers: OptionalIdempotencyHeaders,
    body: { required: true, content: { 'application/json': { schema: ProjectCreateSchema } } },
  },
  responses: {
    201: {
      ...json(
        ProjectSchema,
        'Created, with revision 1: the removal’s mask at the source’s size (a replay of the same Idempotency-Key: that project)',
      ),
      headers: { Location: { schema: { type: 'string' } } },
    },
    409: problemContent(`Conflict: ${IDEMPOTENCY_CONFLICT}`),
    404: problemContent('`jobId` names no job of this workspace (`job_not_found`)'),
    410: problemContent('The removal’s result or source is past retention'),
    503: processorUnavailable('inspect the source'),
  },
})

const list = createRoute({
  method: 'get',
  path: '/v1/projects',
  operationId: 'listProjects',
  summary: "List the workspace's projects, newest first",
  description:
    'Needs the `jobs:read` scope. Pages with `limit` and `cursor`: send the answer’s `nextCursor` as `cursor` for the next page (null on the last one).',
  tags,
  security,
  middleware: [authorize('GET /v1/projects')] as const,
  request: { query: ProjectListQuery },
  responses: { 200: json(ProjectListSchema, 'Projects, newest first') },
})

const getOne = createRoute({
  method: 'get',
  path: '/v1/projects/{id}',
  operationId: 'getProject',
  summary: 'Get a project and its current revision',
  description:
    'Needs the `jobs:read` scope. `currentRevisionId` is the newest revision, the one the next edit or refinement must name as `baseRevisionId`; `refinementsUsed` counts the refinements that made a revision or may still make one (failed and canceled ones do not count against the cap).',
  tags,
  security,
  middleware: [authorize('GET /v1/projects/{id}')] as const,
  request: { params: IdParams },
  responses: { 200: json(ProjectSchema, 'The project') },
})

const remove = createRoute({
  method: 'delete',
  path: '/v1/projects/{id}',
  operationId: 'deleteProject',
  summary: 'Delete a project with its source copy, masks, refinements and exports',
  description:
    'Needs the `images:write` scope. Refinements and exports still running are canceled first; then the project’s stored bytes, revisions, refinements, exports and event log are removed, and open event streams are closed. The removal job it was made from is left as it is.',
  tags,
  security,
  middleware: [authorize('DELETE /v1/projects/{id}')] as const,
  request: { params: IdParams },
  responses: { 204: { description: 'Deleted' } },
})

const events = createRoute({
  method: 'get',
  path: '/v1/projects/{id}/events',
  operationId: 'streamProjectEvents',
  summary: "Stream a project's refinement and export events (server-sent events)",
  description:
    'Needs the `jobs:read` scope. Replays the project’s events (all of them, or those after `Last-Event-ID`), then stays open for new ones until the project is deleted. An event is sent when a refinement or export ends, whatever its status, and its `data` is that refinement or export as it ended.',
  tags,
  security,
  middleware: [authorize('GET /v1/projects/{id}/events')] as const,
  request: { params: IdParams },
  responses: {
    200: {
      description:
        'image.refinement.completed.v1 and image.export.completed.v1 as they happen; reconnect with Last-Event-ID',
      content: eventStream(
        PROJECT_EVENT_TYPES,
        'id: 5c7e…\nevent: image.export.completed.v1\ndata: {"id":"5c7e…","type":"image.export.completed.v1",…}\n\n',
      ),
    },
  },
})

const listRevs = createRoute({
  method: 'get',
  path: '/v1/projects/{id}/revisions',
  operationId: 'listRevisions',
  summary: "List a project's revisions, newest (current) first",
  description:
    'Needs the `jobs:read` scope. Every revision in one answer (no paging); each names its base, the strokes and recipe it was made with, and the refinement that made it, if any.',
  tags,
  security,
  middleware: [authorize('GET /v1/projects/{id}/revisions')] as const,
  request: { params: IdParams },
  responses: { 200: json(RevisionListSchema, 'Revisions, newest first') },
})

const createRev = createRoute({
  method: 'post',
  path: '/v1/projects/{id}/revisions',
  operationId: 'createRevision',
  summary: 'Edit the newest revision with brush strokes and/or a recipe',
  description:
    'The new revision builds on the newest one (baseRevisionId), or, after an undo, on an earlier one named by restoreRevisionId: its mask with the strokes applied.',
  tags,
  security,
  middleware: [authorize('POST /v1/projects/{id}/revisions')] as const,
  request: {
    params: IdParams,
    headers: OptionalIdempotencyHeaders,
    body: { required: true, content: { 'application/json': { schema: RevisionCreateSchema } } },
  },
  responses: {
    201: {
      ...json(RevisionSchema, 'The new revision, now current (a replay of the same Idempotency-Key: that revision)'),
      headers: { Location: { schema: { type: 'string' } } },
    },
    409: problemContent(`baseRevisionId is not the newest revision (revision_conflict), or ${IDEMPOTENCY_CONFLICT}`),
    503: processorUnavailable('draw the strokes'),
  },
})

const getRev = createRoute({
  method: 'get',
  path: '/v1/projects/{id}/revisions/{revisionId}',
  operationId: 'getRevision',
  summary: 'Get a revision',
  description:
    'Needs the `jobs:read` scope. Revisions never change once made; `links.mask` downloads the revision’s mask. A revision of another project is 404 `revision_not_found`.',
  tags,
  security,
  middleware: [authorize('GET /v1/projects/{id}/revisions/{revisionId}')] as const,
  request: { params: RevisionParams },
  responses: { 200: json(RevisionSchema, 'The revision') },
})

const getMask = createRoute({
  method: 'get',
  path: '/v1/projects/{id}/revisions/{revisionId}/mask',
  operationId: 'getRevisionMask',
  summary: "Download a revision's mask (8-bit grayscale PNG at the source's size)",
  description:
    'Needs the `jobs:read` scope. A revision’s mask never changes, so the answer may be cached for good. A project keeps its masks until it is deleted: they are not under the retention of job results.',
  tags,
  security,
  middleware: [authorize('GET /v1/projects/{id}/revisions/{revisionId}/mask')] as const,
  request: { params: RevisionParams },
  responses: {
    200: { description: 'The mask', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
    410: problemContent('The mask’s bytes are no longer stored (`asset_expired`)'),
  },
})

export const projects = createRouter()
  .openapi(create, async (c) => {
    const { workspaceId } = c.get('auth')
    const body = c.req.valid('json')
    const row = await createOnce({
      db: c.env.DB,
      workspaceId,
      scope: 'projects',
      key: c.req.valid('header')['idempotency-key'],
      request: body,
      create: () => createProject(c.env, workspaceId, body, inferenceCall(c)),
      idOf: (created) => created.id,
      find: (id) => findProject(c.env.DB, workspaceId, id),
    })
    const project = await toProject(c.env.DB, row)
    c.header('Location', project.links.self)
    return c.json(project, 201)
  })
  .openapi(list, async (c) => {
    const page = await listProjects(c.env.DB, c.get('auth').workspaceId, c.req.valid('query'))
    const items = await Promise.all(page.rows.map((row) => toProject(c.env.DB, row)))
    return c.json({ projects: items, nextCursor: page.nextCursor }, 200)
  })
  .openapi(getOne, async (c) => {
    const row = await findProject(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    return c.json(await toProject(c.env.DB, row), 200)
  })
  .openapi(remove, async (c) => {
    const row = await findProject(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    await deleteProject(c.env, row)
    return c.body(null, 204)
  })
  .openapi(events, async (c) => {
    const { id } = c.req.valid('param')
    const stream = await projectEvents(c.env, c.get('auth').workspaceId, id, c.req.header('last-event-id'))
    return stream as unknown as Response
  })
  .openapi(listRevs, async (c) => {
    const project = await findProject(c.env.DB, c.get('auth').workspaceId, c.req.valid('param').id)
    return c.json({ revisions: (await listRevisions(c.env.DB, project.id)).map(toRevision) }, 200)
  })
  .openapi(createRev, async (c) => {
    const { workspaceId } = c.get('auth')
    const project = await findProject(c.env.DB, workspaceId, c.req.valid('param').id)
    const body = c.req.valid('json')
    const row = await createOnce({
      db: c.env.DB,
      workspaceId,
      scope: 'project-revisions',
      key: c.req.valid('header')['idempotency-key'],
      request: { projectId: project.id, body },
      create: () => createRevision(c.env, project, body, inferenceCall(c)),
      idOf: (created) => created.id,
      find: (id) => findRevision(c.env.DB, project.id, id),
    })
    const revision = toRevision(row)
    c.header('Location', revision.links.self)
    return c.json(revision, 201)
  })
  .openapi(getRev, async (c) => {
    const { id, revisionId } = c.req.valid('param')
    const project = await findProject(c.env.DB, c.get('auth').workspaceId, id)
    return c.json(toRevision(await findRevision(c.env.DB, project.id, revisionId)), 200)
  })
  .openapi(getMask, async (c) => {
    const { id, revisionId } = c.req.valid('param')
    const project = await findProject(c.env.DB, c.get('auth').workspaceId, id)
    const mask = await readRevisionMask(c.env, project.id, revisionId)
    return c.body(mask.body, 200, mask.headers)
  })
