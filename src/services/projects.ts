/**
 * @module
 * Projects (DESIGN.md §3 Projects): made from a succeeded removal, they keep a copy of its source
 * and every revision's mask under `projects/<id>/` until they are deleted, out of the 24-hour
 * result retention. Revision 1 is the removal's mask at the source's size.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { listPage } from '../lib/cursor'
import { copyHashed, deleteByPrefix } from '../lib/storage'
import { iso } from '../lib/time'
import type { Project } from '../schemas/project'
import { type InferenceCall, inspectStored } from './inference'
import { proxyEventStream } from './event-stream'
import { projectStream } from './events'
import { findJob, type JobRow, UNFINISHED_SQL } from './job-store'
import { bytesExpired } from './stored-bytes'
import { projectPrefix } from './project-keys'
import { currentRevision, reviseMask, revisionInsert } from './revisions'
import type { projects } from '../db/schema'
import type { D1Row } from '../db/rows'

export { REFINEMENTS_PER_PROJECT } from '../contract/limits'

/**
 * The refinements that spend a project's cap, counted from their jobs (bind the workspace's id,
 * then the project's: the workspace narrows the scan to its own jobs' index): those that made a
 * revision or may still make one. One that failed (a stale base, the service's fault or the
 * input's) or was canceled made nothing, so it gives its place back (docs/decisions.md). Counted,
 * not kept in a counter, so no way a job can end forgets to give it back.
 */
export const SPENT_REFINEMENTS_SQL = `SELECT COUNT(*) FROM jobs WHERE workspace_id = ? AND project_id = ? AND kind = 'refinement' AND status NOT IN ('failed', 'canceled')`

/** How many of its `REFINEMENTS_PER_PROJECT` the project has spent. */
export async function refinementsUsed(
  db: D1Database,
  project: Pick<ProjectRow, 'id' | 'workspace_id'>,
): Promise<number> {
  const [row] = await db.prepare(SPENT_REFINEMENTS_SQL).bind(project.workspace_id, project.id).raw<[number]>()
  return row?.[0] ?? 0
}

export type ProjectRow = D1Row<typeof projects>

export async function findProject(db: D1Database, workspaceId: string, id: string): Promise<ProjectRow> {
  const row = await db
    .prepare('SELECT * FROM projects WHERE id = ? AND workspace_id = ?')
    .bind(id, workspaceId)
    .first<ProjectRow>()
  if (!row) throw new ApiError('project_not_found', `No project ${id} in this workspace`)
  return row
}

export async function toProject(db: D1Database, row: ProjectRow): Promise<Project> {
  const current = await currentRevision(db, row.id)
  const self = `/v1/projects/${row.id}`
  return {
    id: row.id,
    name: row.name,
    sourceJobId: row.source_job_id,
    width: row.width,
    height: row.height,
    currentRevisionId: current.id,
    refinementsUsed: await refinementsUsed(db, row),
    createdAt: row.created_at,
    links: { self, revisions: `${self}/revisions`, events: `${self}/events` },
  }
}

/**
 * Makes a project from a succeeded removal job of the workspace: copies its source, turns its
 * result into revision 1's mask at the source's upright size, and records both at once.
 */
export async function createProject(
  env: Env,
  workspaceId: string,
  { jobId, name }: { jobId: string; name?: string },
  call: InferenceCall,
): Promise<ProjectRow> {
  const job = await findJob(env.DB, workspaceId, jobId)
  assertProjectSource(job)
  if (bytesExpired(job)) {
    throw new ApiError('asset_expired', `The result of job ${jobId} expired at ${job.expires_at}`)
  }
  const id = crypto.randomUUID()
  const revisionId = crypto.randomUUID()
  const sourceKey = `${projectPrefix(id)}source`
  try {
    const source = await copyHashed(env.BUCKET, job.source_key, sourceKey)
    if (!source) throw new ApiError('asset_expired', `The source image of job ${jobId} is no longer stored`)
    const { width, height } = await uprightSize(env, { key: sourceKey, ...source }, call)
    // The removal's result (a cutout's alpha, or a mask) becomes revision 1's mask at source size.
    const removalKey = `${projectPrefix(id)}removal`
    const removal = await copyHashed(env.BUCKET, job.result_key, removalKey)
    if (!removal) throw new ApiError('asset_expired', `The result of job ${jobId} is no longer stored`)
    const mask = await reviseMask(env, {
      projectId: id,
      revisionId,
      width,
      height,
      base: { key: removalKey, ...removal },
      strokes: [],
      call,
    })
    const row: ProjectRow = {
      id,
      workspace_id: workspaceId,
      name: name ?? `Project from job ${jobId.slice(0, 8)}`,
      source_job_id: jobId,
      source_key: sourceKey,
      source_size: source.size,
      source_sha256: source.sha256,
      width,
      height,
      refinements_used: 0,
      created_at: iso(),
    }
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO projects (id, workspace_id, name, source_job_id, source_key, source_size, source_sha256, width, height, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).bind(id, workspaceId, row.name, jobId, sourceKey, source.size, source.sha256, width, height, row.created_at),
      revisionInsert(env.DB, {
        id: revisionId,
        projectId: id,
        number: 1,
        baseRevisionId: null,
        strokes: [],
        recipe: null,
        refinementId: null,
        mask,
      }),
    ])
    return row
  } catch (err) {
    await deleteProjectBytes(env, id)
    throw err
  }
}

/** Only a removal that succeeded starts a project; the message names what the job is instead. */
function assertProjectSource(job: JobRow): asserts job is JobRow & { result_key: string } {
  const refuse = (detail: string) => new ApiError('invalid_input', detail, { field: 'jobId' })
  if (job.kind !== 'remove_background') {
    throw refuse(`Expected a removal job, but job ${job.id} is a ${job.kind} job`)
  }
  if (job.status !== 'succeeded' || !job.result_key) {
    throw refuse(`Expected a succeeded removal job, but job ${job.id} is ${job.status}`)
  }
}

/** The source's size after EXIF orientation, as the inference server decodes it. */
async function uprightSize(env: Env, source: { key: string; size: number; sha256: string }, call: InferenceCall) {
  const object = await env.BUCKET.get(source.key)
  if (!object) throw new ApiError('asset_expired', 'The source image is no longer stored')
  return inspectStored(call, object, source.sha256)
}

/** A project's event stream (SPEC.md §6), from after `lastEventId`. */
export async function projectEvents(env: Env, workspaceId: string, id: string, lastEventId?: string) {
  await findProject(env.DB, workspaceId, id)
  return proxyEventStream(projectStream(env, id), 'https://project-stream/events', lastEventId)
}

export function listProjects(db: D1Database, workspaceId: string, q: { limit?: number; cursor?: string }) {
  return listPage<ProjectRow>(db, 'projects', { where: ['workspace_id = ?'], args: [workspaceId] }, q)
}

/**
 * Deletes a project with its bytes (source, masks, export results), its revisions, and its
 * refinements and exports; running ones are canceled first so none writes after.
 */
export async function deleteProject(env: Env, project: ProjectRow): Promise<void> {
  const { results: active } = await env.DB.prepare(`SELECT id FROM jobs WHERE project_id = ? AND ${UNFINISHED_SQL}`)
    .bind(project.id)
    .all<{ id: string }>()
  await Promise.all(active.map(({ id }) => env.JOB_RUN.get(env.JOB_RUN.idFromName(id)).cancel()))
  const { results: exports } = await env.DB.prepare(
    `SELECT result_key FROM jobs WHERE project_id = ? AND result_key IS NOT NULL`,
  )
    .bind(project.id)
    .all<{ result_key: string }>()
  if (exports.length) await env.BUCKET.delete(exports.map((e) => e.result_key))
  await deleteProjectBytes(env, project.id)
  await env.DB.batch([
    env.DB.prepare('DELETE FROM revisions WHERE project_id = ?').bind(project.id),
    env.DB.prepare('DELETE FROM jobs WHERE project_id = ?').bind(project.id),
    env.DB.prepare('DELETE FROM projects WHERE id = ?').bind(project.id),
  ])
  await projectStream(env, project.id).clear()
}

/** Deletes every object under the project's prefix. */
async function deleteProjectBytes(env: Env, projectId: string): Promise<void> {
  await deleteByPrefix(env.BUCKET, projectPrefix(projectId))
}
