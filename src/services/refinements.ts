/**
 * @module
 * Refinements (DESIGN.md §3 Refinements) as stored and shown: a project's internal `refinement`
 * jobs and their API shape. Accepting one is `project-edits.ts`'s.
 */
import type { Env } from '../env'
import type { Refinement, RefinementCreate } from '../schemas/project'
import { findJobOfKind, findProjectJob, type JobRow } from './job-store'
import { refinementRevisionId } from './revisions'

/** What a refinement's job row keeps in `options`. */
export type RefinementOptions = Pick<RefinementCreate, 'baseRevisionId' | 'restoreRevisionId' | 'points' | 'box'>

export const refinementPath = (projectId: string, id: string) => `/v1/projects/${projectId}/refinements/${id}`

export const findRefinement = (db: D1Database, workspaceId: string, projectId: string, id: string) =>
  findProjectJob(db, 'refinement', { workspaceId, projectId, id })

export async function toRefinement(db: D1Database, row: JobRow): Promise<Refinement> {
  const options = JSON.parse(row.options) as RefinementOptions
  return {
    id: row.id,
    projectId: row.project_id ?? '',
    status: row.status,
    baseRevisionId: options.baseRevisionId,
    restoreRevisionId: options.restoreRevisionId ?? null,
    revisionId: await refinementRevisionId(db, row.id),
    ...(options.points ? { points: options.points } : {}),
    ...(options.box ? { box: options.box } : {}),
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

/** The data of `image.refinement.completed.v1`: the refinement as it ended (gone with its project: just ids). */
export async function describeRefinement(env: Env, id: string, projectId: string) {
  const row = await findJobOfKind(env.DB, 'refinement', id)
  return row ? { ...(await toRefinement(env.DB, row)), projectId } : { id, projectId, status: 'canceled' }
}
