/**
 * @module
 * Exports (DESIGN.md §3 Exports): a revision rendered with a recipe into png, webp, jpeg, zip or
 * psd, as an internal `export` job on the runner (no credit), as stored and shown. Its result is
 * read like a job's: a signed URL valid ten minutes, the bytes kept 24 hours. Accepting one is
 * `project-edits.ts`'s.
 */
import { EXPORT_CONTENT_TYPES, type Recipe } from '../contract/editing'
import type { Env } from '../env'
import type { Export } from '../schemas/project'
import { findJobOfKind, findProjectJob, type JobRow } from './job-store'
import { bytesExpired } from './stored-bytes'
import { signResultPath } from './result-url'

/** What an export's job row keeps in `options`. */
export interface ExportOptions {
  revisionId: string
  recipe: Recipe
}

export const findExport = (db: D1Database, workspaceId: string, projectId: string, id: string) =>
  findProjectJob(db, 'export', { workspaceId, projectId, id })

/** For a signed result URL, which carries no credential: the export by its id alone. */
export const findExportById = (db: D1Database, projectId: string, id: string) =>
  findProjectJob(db, 'export', { projectId, id })

export const exportPath = (projectId: string, id: string) => `/v1/projects/${projectId}/exports/${id}`

export async function toExport(row: JobRow, resultSecret: string): Promise<Export> {
  const options = JSON.parse(row.options) as ExportOptions
  const format = row.format as Export['format']
  const projectId = row.project_id ?? ''
  let result: Export['result'] = null
  if (row.status === 'succeeded' && row.result_key && !bytesExpired(row)) {
    const signed = await signResultPath(resultSecret, `${exportPath(projectId, row.id)}/result`)
    result = { url: signed.path, contentType: EXPORT_CONTENT_TYPES[format], expiresAt: signed.expiresAt }
  }
  return {
    id: row.id,
    projectId,
    revisionId: options.revisionId,
    format,
    recipe: options.recipe,
    status: row.status,
    result,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    createdAt: row.created_at,
    completedAt: row.completed_at,
    expiresAt: row.expires_at,
  }
}

/** The data of `image.export.completed.v1`: the export as it ended (gone with its project: just ids). */
export async function describeExport(env: Env, id: string, projectId: string) {
  const row = await findJobOfKind(env.DB, 'export', id)
  return row ? { ...(await toExport(row, env.RESULT_SIGNING_KEY)), projectId } : { id, projectId, status: 'canceled' }
}
