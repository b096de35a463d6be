/**
 * @module
 * Refinements (DESIGN.md §3 Refinements): a box and/or labelled points over the newest revision,
 * queued on the job runner as an internal `refinement` job (a workspace slot, no credit), at most
 * 20 per project that did not fail. Its result is the project's next revision.
 */
import type { RefineRequest } from '../contract/editing'
import type { Env } from '../env'
import { ApiError } from '../errors'
import type { Refinement, RefinementCreate } from '../schemas/project'
import type { AuthContext } from './auth'
import { assertProcessorAvailable, InferenceClient } from './inference'
import { acceptJobs, findProjectJob, type JobRow, type JobStart } from './jobs'
import { type ProjectRow, REFINEMENTS_PER_PROJECT, SPENT_REFINEMENTS_SQL } from './projects'
import { currentBase, revisionMask } from './revisions'
import type { Recipe } from '../contract/editing'

/** What a refinement's job row keeps in `options`. */
type RefinementOptions = Pick<RefinementCreate, 'baseRevisionId' | 'points' | 'box'>

export async function acceptRefinement(
  env: Env,
  ctx: { auth: AuthContext; requestId: string },
  project: ProjectRow,
  req: RefinementCreate,
): Promise<JobRow> {
  const base = await currentBase(env.DB, project.id, req.baseRevisionId)
  await assertProcessorAvailable(InferenceClient.fromEnv(env))
  const jobId = crypto.randomUUID()
  const request: RefineRequest = {
    ...(req.points ? { points: req.points } : {}),
    ...(req.box ? { box: req.box } : {}),
  }
  const options: RefinementOptions = { baseRevisionId: base.id, ...request }
  const start: JobStart<'refinement'> = {
    jobId,
    workspaceId: project.workspace_id,
    correlationId: ctx.requestId,
    kind: 'refinement',
    input: {
      projectId: project.id,
      baseRevisionId: base.id,
      baseNumber: base.number,
      baseRecipe: base.recipe ? (JSON.parse(base.recipe) as Recipe) : null,
      revisionId: crypto.randomUUID(),
      source: { key: project.source_key, size: project.source_size, sha256: project.source_sha256 },
      mask: revisionMask(base),
      request,
    },
  }
  const row = {
    id: jobId,
    workspaceId: project.workspace_id,
    kind: 'refinement' as const,
    options,
    sourceKey: project.source_key,
    format: 'png',
    projectId: project.id,
  }
  // The cap is checked in the job's own insert, so concurrent requests cannot pass it.
  const unstarted = await acceptJobs(env, [{ row, start }], {
    hold: false,
    guard: {
      sql: `(${SPENT_REFINEMENTS_SQL}) < ?`,
      args: [project.workspace_id, project.id, REFINEMENTS_PER_PROJECT],
    },
    refused: () =>
      new ApiError(
        'rate_limit_exceeded',
        `A project may have at most ${REFINEMENTS_PER_PROJECT} refinements; this one has used them all`,
        { retryable: false },
      ),
  })
  if (unstarted) throw new ApiError('processor_unavailable', 'The refinement could not be scheduled', { retryAfter: 1 })
  return findRefinement(env.DB, project.workspace_id, project.id, jobId)
}

export const findRefinement = (db: D1Database, workspaceId: string, projectId: string, id: string) =>
  findProjectJob(db, 'refinement', { workspaceId, projectId, id })

export async function toRefinement(db: D1Database, row: JobRow): Promise<Refinement> {
  const options = JSON.parse(row.options) as RefinementOptions
  const revision = await db
    .prepare('SELECT id FROM revisions WHERE refinement_id = ?')
    .bind(row.id)
    .first<{ id: string }>()
  return {
    id: row.id,
    projectId: row.project_id ?? '',
    status: row.status,
    baseRevisionId: options.baseRevisionId,
    revisionId: revision?.id ?? null,
    ...(options.points ? { points: options.points } : {}),
    ...(options.box ? { box: options.box } : {}),
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

/** The data of `image.refinement.completed.v1`: the refinement as it ended (gone with its project: just ids). */
export async function describeRefinement(env: Env, id: string, projectId: string) {
  const row = await env.DB.prepare(`SELECT * FROM jobs WHERE id = ? AND kind = 'refinement'`).bind(id).first<JobRow>()
  return row ? { ...(await toRefinement(env.DB, row)), projectId } : { id, projectId, status: 'canceled' }
}
