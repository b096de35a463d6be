/**
 * @module
 * Accepting a project's refinements and exports (DESIGN.md §3 Refinements, Exports): their specs
 * for the accept path (`accept.ts`). Both are internal jobs on the runner holding no credit, made
 * at most once per optional `Idempotency-Key`.
 */
import {
  type Recipe,
  type RefineRequest,
  renderSizeProblem,
  type Size,
  sizingField,
  smallestCanvas,
} from '../contract/editing'
import { ApiError } from '../errors'
import type { Export, ExportCreate, Refinement, RefinementCreate } from '../schemas/project'
import { type AcceptContext, type Accepted, acceptJobs } from './accept'
import { exportPath, type ExportOptions, findExport, toExport } from './exports'
import { type ProjectRow, REFINEMENTS_PER_PROJECT, SPENT_REFINEMENTS_SQL } from './projects'
import { findRefinement, type RefinementOptions, refinementPath, toRefinement } from './refinements'
import {
  currentBase,
  currentRevision,
  findRevision,
  recipeOf,
  type RevisionRow,
  revisionMask,
  startOf,
  lineagePoints,
} from './revisions'

/** Exports wait this long for their result unless `Prefer: wait` says otherwise (DESIGN.md §3). */
export const DEFAULT_EXPORT_WAIT_SECONDS = 8

/** With no recipe the revision's own applies, and with none there the plain cutout. */
const NO_RECIPE: Recipe = { version: 1 }

const sourceOf = (project: ProjectRow) => ({
  key: project.source_key,
  size: project.source_size,
  sha256: project.source_sha256,
})

/**
 * A box and/or labelled points over the newest revision, or over the earlier one it restores (undo,
 * then refine); it ends as the project's next revision.
 */
export function acceptRefinement(
  ctx: AcceptContext,
  project: ProjectRow,
  req: RefinementCreate,
): Promise<Accepted<Refinement>> {
  const { env } = ctx
  return acceptJobs<Refinement, { base: RevisionRow; start: RevisionRow; restoreRevisionId: string | null }>(ctx, {
    kind: 'refinement',
    idempotency: { scope: 'project-refinements', request: { projectId: project.id, body: req } },
    async check() {
      const base = await currentBase(env.DB, project.id, req.baseRevisionId)
      return { base, ...(await startOf(env.DB, project.id, base, req.restoreRevisionId)) }
    },
    async draft(jobId, { base, start, restoreRevisionId }) {
      const request: RefineRequest = {
        ...(req.points ? { points: req.points } : {}),
        ...(req.box ? { box: req.box } : {}),
      }
      const options: RefinementOptions = {
        baseRevisionId: base.id,
        ...(restoreRevisionId ? { restoreRevisionId } : {}),
        ...request,
      }
      // The clicks the start revision came from still hold (the inference server keeps them).
      const earlierPoints = await lineagePoints(env.DB, start)
      return {
        jobs: [
          {
            id: jobId,
            kind: 'refinement',
            options,
            sourceKey: project.source_key,
            projectId: project.id,
            input: {
              projectId: project.id,
              baseRevisionId: base.id,
              baseNumber: base.number,
              restoreRevisionId,
              baseRecipe: recipeOf(start),
              revisionId: crypto.randomUUID(),
              source: sourceOf(project),
              mask: revisionMask(start),
              request: earlierPoints.length ? { ...request, earlierPoints } : request,
            },
          },
        ],
        // The cap is checked in the job's own insert, so concurrent requests cannot pass it.
        guard: {
          sql: `(${SPENT_REFINEMENTS_SQL}) < ?`,
          args: [project.workspace_id, project.id, REFINEMENTS_PER_PROJECT],
          refused: () =>
            new ApiError(
              'rate_limit_exceeded',
              `A project may have at most ${REFINEMENTS_PER_PROJECT} refinements; this one has used them all`,
              { retryable: false },
            ),
        },
      }
    },
    present: async (id) => toRefinement(env.DB, await findRefinement(env.DB, project.workspace_id, project.id, id)),
    location: (id) => refinementPath(project.id, id),
    unscheduled: 'refinement',
  })
}

/** A revision rendered with a recipe; `ctx.waitSeconds` is the export's bounded wait. */
export function acceptExport(ctx: AcceptContext, project: ProjectRow, req: ExportCreate): Promise<Accepted<Export>> {
  const { env } = ctx
  return acceptJobs<Export, { revision: RevisionRow; recipe: Recipe }>(ctx, {
    kind: 'export',
    // A replay waits for the same export as the first request did (`Prefer` is not part of the request).
    idempotency: { scope: 'project-exports', request: { projectId: project.id, body: req } },
    async check() {
      const revision = req.revisionId
        ? await findRevision(env.DB, project.id, req.revisionId, 'revisionId')
        : await currentRevision(env.DB, project.id)
      const recipe = req.recipe ?? recipeOf(revision) ?? NO_RECIPE
      assertRenderable(project, recipe)
      return { revision, recipe }
    },
    async draft(jobId, { revision, recipe }) {
      const options: ExportOptions = { revisionId: revision.id, recipe }
      return {
        jobs: [
          {
            id: jobId,
            kind: 'export',
            options,
            sourceKey: project.source_key,
            format: req.format,
            projectId: project.id,
            input: {
              projectId: project.id,
              revisionId: revision.id,
              format: req.format,
              recipe,
              source: sourceOf(project),
              mask: revisionMask(revision),
              photo: { width: project.width, height: project.height },
            },
          },
        ],
      }
    },
    present: async (id) =>
      toExport(await findExport(env.DB, project.workspace_id, project.id, id), env.RESULT_SIGNING_KEY),
    location: (id) => exportPath(project.id, id),
    unscheduled: 'export',
  })
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
