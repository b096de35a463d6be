/**
 * @module
 * `refinement` (internal; DESIGN.md §3 Refinements): the project's source and the mask of its base
 * revision (or of the earlier one it restores) in, a refined mask out, recorded as the next
 * revision when the base is still the newest.
 * Holds no credit; reports `image.refinement.completed.v1` to webhooks and the project's stream.
 */
import { MASK_OUTPUT, type Recipe, type RefineRequest } from '../contract/editing'
import { jsonPart } from '../contract/signing'
import { maskKey } from '../services/project-keys'
import { insertRevision, newestRevisionNumber, revisionExists, staleBaseMessage } from '../services/revisions'
import { describeRefinement } from '../services/refinements'
import { JobRejected, type JobKind, type StoredObject, sourcePart } from './kind'

/** The base stopped being the newest while the refinement queued or ran: the job fails 409's way. */
const staleBase = (id: string) => new JobRejected('revision_conflict', staleBaseMessage(id))

export interface RefinementInput {
  projectId: string
  baseRevisionId: string
  baseNumber: number
  /** The earlier revision refined instead of the base (undo, then refine); absent in jobs queued before it existed. */
  restoreRevisionId?: string | null
  /** The recipe the new revision keeps from the revision it refines. */
  baseRecipe: Recipe | null
  /** The id the new revision gets (its mask is stored under it). */
  revisionId: string
  source: StoredObject
  mask: StoredObject
  request: RefineRequest
}

export const refinement: JobKind<RefinementInput> = {
  route: '/v1/refine',
  holdsCredit: false,
  async parts(env, { input }) {
    // A base that stopped being the newest while the job queued: fail before the model runs.
    if ((await newestRevisionNumber(env.DB, input.projectId)) !== input.baseNumber) {
      throw staleBase(input.baseRevisionId)
    }
    return [
      await jsonPart('options', input.request),
      await sourcePart(env, 'image', input.source),
      await sourcePart(env, 'mask', input.mask),
    ]
  },
  outputKey: ({ input }) => maskKey(input.projectId, input.revisionId),
  async completed(env, { jobId, input }, outputs) {
    const mask = outputs.find((o) => o.name === MASK_OUTPUT)
    if (!mask) throw new JobRejected('processing_failed', 'The inference server returned no mask')
    if (await revisionExists(env.DB, input.revisionId)) return // a retried completion
    const inserted = await insertRevision(env.DB, {
      id: input.revisionId,
      projectId: input.projectId,
      number: input.baseNumber + 1,
      baseRevisionId: input.baseRevisionId,
      restoreRevisionId: input.restoreRevisionId ?? null,
      strokes: [],
      recipe: input.baseRecipe,
      refinementId: jobId,
      mask: { key: mask.key, size: mask.size, sha256: mask.sha256 },
    })
    if (!inserted) {
      await env.BUCKET.delete(mask.key)
      throw staleBase(input.baseRevisionId)
    }
  },
  report: {
    event: 'image.refinement.completed.v1',
    describe: (env, job) => describeRefinement(env, job.jobId, job.input.projectId),
  },
}
