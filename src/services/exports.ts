/**
 * @module
 * Exports (DESIGN.md §3 Exports): a revision rendered with a recipe into png, webp, jpeg, zip or
 * psd, as an internal `export` job on the runner (no credit). Its result is read like a job's:
 * a signed URL valid ten minutes, the bytes kept 24 hours.
 */
import {
  EXPORT_CONTENT_TYPES,
  type Recipe,
  renderSizeProblem,
  type Size,
  sizingField,
  smallestCanvas,
} from '../contract/editing'
import type { Env } from '../env'
import { ApiError } from '../errors'
import type { Export, ExportCreate } from '../schemas/project'
import type { AuthContext } from './auth'
import { assertProcessorAvailable, InferenceClient } from './inference'
import { acceptJobs, findProjectJob, type JobRow, type JobStart, resultExpired } from './jobs'
import { currentRevision, type ProjectRow } from './projects'
import { signResultPath } from './result-url'
import { findRevision, revisionMask } from './revisions'

/** What an export's job row keeps in `options`. */
interface ExportOptions {
  revisionId: string
  recipe: Recipe
}

/** With no recipe the revision's own applies, and with none there the plain cutout. */
const NO_RECIPE: Recipe = { version: 1 }

export async function acceptExport(
  env: Env,
  ctx: { auth: AuthContext; requestId: string },
  project: ProjectRow,
  req: ExportCreate,
): Promise<JobRow> {
  const revision = req.revisionId
    ? await findRevision(env.DB, project.id, req.revisionId, 'revisionId')
    : await currentRevision(env.DB, project.id)
  const recipe = req.recipe ?? (revision.recipe ? (JSON.parse(revision.recipe) as Recipe) : NO_RECIPE)
  assertRenderable(project, recipe)
  await assertProcessorAvailable(InferenceClient.fromEnv(env))
  const jobId = crypto.randomUUID()
  const start: JobStart<'export'> = {
    jobId,
    workspaceId: project.workspace_id,
    correlationId: ctx.requestId,
    kind: 'export',
    input: {
      projectId: project.id,
      revisionId: revision.id,
      format: req.format,
      recipe,
      source: { key: project.source_key, size: project.source_size, sha256: project.source_sha256 },
      mask: revisionMask(revision),
    },
  }
  const options: ExportOptions = { revisionId: revision.id, recipe }
  const row = {
    id: jobId,
    workspaceId: project.workspace_id,
    kind: 'export' as const,
    options,
    sourceKey: project.source_key,
    format: req.format,
    projectId: project.id,
  }
  const unstarted = await acceptJobs(env, [{ row, start }], { hold: false })
  if (unstarted) throw new ApiError('processor_unavailable', 'The export could not be scheduled', { retryAfter: 1 })
  return findExport(env.DB, project.workspace_id, project.id, jobId)
}

/**
 * 413 when the request is made, for a recipe no mask of this source can render within the limit:
 * accepted, it could only end `failed`. The arithmetic is the renderer's own (the shared
 * contract's); with `crop` the subject's box is unknown here, so a recipe whose size depends on
 * it is left to the render (docs/decisions.md).
 */
function assertRenderable(source: Size, recipe: Recipe): void {
  const problem = renderSizeProblem(smallestCanvas(source, recipe), recipe.crop === true)
  if (problem) throw new ApiError('image_too_large', problem, { field: sizingField(recipe) })
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
  if (row.status === 'succeeded' && row.result_key && !resultExpired(row)) {
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
  const row = await env.DB.prepare(`SELECT * FROM jobs WHERE id = ? AND kind = 'export'`).bind(id).first<JobRow>()
  return row ? { ...(await toExport(row, env.RESULT_SIGNING_KEY)), projectId } : { id, projectId, status: 'canceled' }
}
