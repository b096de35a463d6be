/**
 * @module
 * Revisions (DESIGN.md §3 Projects): immutable masks of a project, numbered from 1; the newest is
 * current, and an edit must name it as its base or get 409 `revision_conflict`; it may start from an
 * earlier revision's mask instead (`restoreRevisionId`: undo, then edit). Strokes are
 * rasterised by the inference server at the source's resolution (`/v1/revise`), so the same
 * strokes give the same mask bytes.
 */
import { jsonPart } from '../contract/signing'
import { MASK_OUTPUT, type Recipe, type RefinementPoint, type ReviseRequest, type Stroke } from '../contract/editing'
import type { Env } from '../env'
import { ApiError } from '../errors'
import { sourcePart, type StoredObject } from '../jobs/kind'
import { putHashed, type StoredBytes } from '../lib/storage'
import { iso } from '../lib/time'
import type { Revision } from '../schemas/project'
import { callNow, type InferenceCall } from './inference'
import type { AnswerHandlers } from './inference-answer'
import { maskKey } from './project-keys'
import type { ProjectRow } from './projects'
import type { revisions } from '../db/schema'
import type { D1Row } from '../db/rows'
import { serveStored, type StoredResponse } from './stored-bytes'

export type RevisionRow = D1Row<typeof revisions>

export interface NewRevision {
  id: string
  projectId: string
  number: number
  baseRevisionId: string | null
  /** The earlier revision it started from instead of its base, if any. */
  restoreRevisionId?: string | null
  strokes: Stroke[]
  recipe: Recipe | null
  refinementId: string | null
  mask: StoredObject
}

/**
 * Inserts a revision only while its base is still the newest (number 1 needs none): a concurrent
 * edit that got there first makes this insert change nothing.
 */
export function revisionInsert(db: D1Database, r: NewRevision): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO revisions (id, project_id, number, base_revision_id, restore_revision_id, strokes, recipe, refinement_id, mask_key, mask_size, mask_sha256, created_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE COALESCE((SELECT MAX(number) FROM revisions WHERE project_id = ?), 0) = ? - 1`,
    )
    .bind(
      r.id,
      r.projectId,
      r.number,
      r.baseRevisionId,
      r.restoreRevisionId ?? null,
      JSON.stringify(r.strokes),
      r.recipe ? JSON.stringify(r.recipe) : null,
      r.refinementId,
      r.mask.key,
      r.mask.size,
      r.mask.sha256,
      iso(),
      r.projectId,
      r.number,
    )
}

/** Inserts the revision (see {@link revisionInsert}); false when another edit made the base stale first. */
export async function insertRevision(db: D1Database, r: NewRevision): Promise<boolean> {
  const [insert] = await db.batch([revisionInsert(db, r)])
  return insert.meta.changes === 1
}

export async function revisionExists(db: D1Database, id: string): Promise<boolean> {
  return (await db.prepare('SELECT 1 FROM revisions WHERE id = ?').bind(id).first()) !== null
}

/** The number of the project's newest revision; null once the project is gone. */
export async function newestRevisionNumber(db: D1Database, projectId: string): Promise<number | null> {
  const row = await db
    .prepare('SELECT MAX(number) AS n FROM revisions WHERE project_id = ?')
    .bind(projectId)
    .first<{ n: number | null }>()
  return row?.n ?? null
}

/** The newest revision (the current one). */
export async function currentRevision(db: D1Database, projectId: string): Promise<RevisionRow> {
  const row = await db
    .prepare('SELECT * FROM revisions WHERE project_id = ? ORDER BY number DESC LIMIT 1')
    .bind(projectId)
    .first<RevisionRow>()
  if (!row) throw new Error(`Project ${projectId} has no revision`)
  return row
}

/** The revision a refinement made, if it made one yet. */
export async function refinementRevisionId(db: D1Database, refinementId: string): Promise<string | null> {
  const row = await db
    .prepare('SELECT id FROM revisions WHERE refinement_id = ?')
    .bind(refinementId)
    .first<{ id: string }>()
  return row?.id ?? null
}

/** A revision's mask bytes (GET …/mask). Revisions are immutable: the same URL always gives the same bytes. */
export async function readRevisionMask(env: Env, projectId: string, revisionId: string): Promise<StoredResponse> {
  const revision = await findRevision(env.DB, projectId, revisionId)
  // A project keeps its masks until it is deleted (no expiry); one missing from storage is gone all the same.
  return serveStored(env.BUCKET, revision.mask_key, { expires_at: null }, `the mask of revision ${revision.id}`, {
    contentType: 'image/png',
    cacheControl: 'private, max-age=31536000, immutable',
  })
}

/** Why an edit on `baseId` is refused: another revision came after it (a 409 now, or a refinement that fails later). */
export const staleBaseMessage = (baseId: string) =>
  `Revision ${baseId} is not the newest revision (another edit came after it); read the project and edit the newest one`
export const staleBase = (baseId: string) => new ApiError('revision_conflict', staleBaseMessage(baseId))

/** The revision `id` of the project; a body field naming another project's revision is bad input. */
export async function findRevision(db: D1Database, projectId: string, id: string, field?: string) {
  const row = await db
    .prepare('SELECT * FROM revisions WHERE id = ? AND project_id = ?')
    .bind(id, projectId)
    .first<RevisionRow>()
  if (row) return row
  if (field) throw new ApiError('invalid_input', `No revision ${id} in this project`, { field })
  throw new ApiError('revision_not_found', `No revision ${id} in this project`)
}

/** The base an edit names, which must be the newest revision. */
export async function currentBase(db: D1Database, projectId: string, baseRevisionId: string): Promise<RevisionRow> {
  const base = await findRevision(db, projectId, baseRevisionId, 'baseRevisionId')
  if ((await currentRevision(db, projectId)).id !== base.id) throw staleBase(base.id)
  return base
}

/**
 * Where an edit starts: the base (the newest), or the earlier revision it restores (undo, then
 * edit). The base must still be the newest either way: that is what detects a concurrent edit.
 * Naming the base itself restores nothing.
 */
export async function startOf(
  db: D1Database,
  projectId: string,
  base: RevisionRow,
  restoreRevisionId: string | undefined,
): Promise<{ start: RevisionRow; restoreRevisionId: string | null }> {
  if (!restoreRevisionId || restoreRevisionId === base.id) return { start: base, restoreRevisionId: null }
  const start = await findRevision(db, projectId, restoreRevisionId, 'restoreRevisionId')
  return { start, restoreRevisionId: start.id }
}

/**
 * The points of every refinement that `revision`'s mask descends from, oldest first (DESIGN.md §3
 * Refinement clicks): its parent is the revision it restored, else its base, so an undone click
 * is not in the lineage of what came after the undo. One recursive query, bounded by the project's
 * revisions.
 */
export async function lineagePoints(db: D1Database, revision: RevisionRow): Promise<RefinementPoint[]> {
  const { results } = await db
    .prepare(
      `WITH RECURSIVE lineage(id, parent, refinement_id, depth) AS (
         SELECT id, COALESCE(restore_revision_id, base_revision_id), refinement_id, 0 FROM revisions WHERE id = ?
         UNION ALL
         SELECT r.id, COALESCE(r.restore_revision_id, r.base_revision_id), r.refinement_id, l.depth + 1
           FROM revisions r JOIN lineage l ON r.id = l.parent
       )
       SELECT j.options FROM lineage l JOIN jobs j ON j.id = l.refinement_id ORDER BY l.depth DESC`,
    )
    .bind(revision.id)
    .all<{ options: string }>()
  return results.flatMap(({ options }) => (JSON.parse(options) as { points?: RefinementPoint[] }).points ?? [])
}

/** The recipe an edit keeps when it gives none: its start's. */
export const recipeOf = (row: RevisionRow): Recipe | null => (row.recipe ? (JSON.parse(row.recipe) as Recipe) : null)

export const revisionMask = (row: RevisionRow): StoredObject => ({
  key: row.mask_key,
  size: row.mask_size,
  sha256: row.mask_sha256,
})

/**
 * How long an edit waits for its turn on a busy inference server before answering 503. A revise
 * call takes a fraction of a second, so ten edits at once (more than the server admits: one
 * running, eight queued) are all served well within it.
 */
const BUSY_WAIT_MS = 20_000
/** Between two tries on a busy server: short, as the server's work is short; jittered. */
const BUSY_RETRY_MS = 200

/** A mask to make: `strokes` over `base` at width×height, stored as the revision's; `call`: the request's client and trace. */
export interface RevisePlan {
  projectId: string
  revisionId: string
  width: number
  height: number
  base: StoredObject
  strokes: Stroke[]
  call: InferenceCall
}

/**
 * Rasterises `strokes` over the base mask (scaled to width×height first) on the inference server,
 * and stores the new mask under the revision's key. A busy server (every slot and its queue
 * taken) is waited for, up to `BUSY_WAIT_MS`; one that cannot be reached is 503 at once.
 * `stillCurrent` is asked before each try: an edit whose base another edit replaced while it
 * waited stops there (409) rather than computing a mask nobody can record.
 */
export async function reviseMask(
  env: Env,
  r: RevisePlan,
  stillCurrent: () => Promise<unknown> = async () => {},
): Promise<StoredObject> {
  const deadline = Date.now() + BUSY_WAIT_MS
  for (;;) {
    await stillCurrent()
    try {
      return await reviseOnce(env, r)
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'processor_unavailable') throw err
      if (Date.now() >= deadline || (await r.call.client.ready()).state === 'unavailable') throw err
      const pause = Math.min(BUSY_RETRY_MS * (0.5 + Math.random()), Math.max(0, deadline - Date.now()))
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }
}

async function reviseOnce(env: Env, r: RevisePlan): Promise<StoredObject> {
  const key = maskKey(r.projectId, r.revisionId)
  const options: ReviseRequest = { width: r.width, height: r.height, strokes: r.strokes }
  const parts = [await jsonPart('options', options), await sourcePart(env, 'mask', r.base)]
  let stored: StoredBytes | undefined
  const store: AnswerHandlers['store'] = async (output, body) => {
    const bytes = await putHashed(env.BUCKET, key, body, output.length, output.contentType)
    if (output.name === MASK_OUTPUT) stored = bytes
    return { ...output, key, ...bytes }
  }
  await callNow(r.call, '/v1/revise', parts, store)
  if (!stored) throw new ApiError('processing_failed', 'The inference server returned no mask')
  return { key, ...stored }
}

/**
 * A user's edit: strokes over the current revision, or over the earlier one it restores (and/or a
 * new recipe). No strokes keeps its start's mask bytes; no recipe keeps its start's recipe.
 */
export async function createRevision(
  env: Env,
  project: ProjectRow,
  req: { baseRevisionId: string; restoreRevisionId?: string; strokes?: Stroke[]; recipe?: Recipe },
  call: InferenceCall,
): Promise<RevisionRow> {
  const base = await currentBase(env.DB, project.id, req.baseRevisionId)
  const { start, restoreRevisionId } = await startOf(env.DB, project.id, base, req.restoreRevisionId)
  const strokes = req.strokes ?? []
  const id = crypto.randomUUID()
  const mask = strokes.length
    ? await reviseMask(
        env,
        {
          projectId: project.id,
          revisionId: id,
          width: project.width,
          height: project.height,
          base: revisionMask(start),
          strokes,
          call,
        },
        () => currentBase(env.DB, project.id, base.id),
      )
    : revisionMask(start)
  const recipe = req.recipe ?? recipeOf(start)
  const inserted = await insertRevision(env.DB, {
    id,
    projectId: project.id,
    number: base.number + 1,
    baseRevisionId: base.id,
    restoreRevisionId,
    strokes,
    recipe,
    refinementId: null,
    mask,
  })
  if (!inserted) {
    if (strokes.length) await env.BUCKET.delete(mask.key)
    throw staleBase(base.id)
  }
  return findRevision(env.DB, project.id, id)
}

export async function listRevisions(db: D1Database, projectId: string): Promise<RevisionRow[]> {
  const { results } = await db
    .prepare('SELECT * FROM revisions WHERE project_id = ? ORDER BY number DESC')
    .bind(projectId)
    .all<RevisionRow>()
  return results
}

export function toRevision(row: RevisionRow): Revision {
  const self = `/v1/projects/${row.project_id}/revisions/${row.id}`
  return {
    id: row.id,
    projectId: row.project_id,
    number: row.number,
    baseRevisionId: row.base_revision_id,
    restoreRevisionId: row.restore_revision_id ?? null,
    strokes: JSON.parse(row.strokes) as Stroke[],
    recipe: recipeOf(row),
    refinementId: row.refinement_id,
    createdAt: row.created_at,
    links: { self, mask: `${self}/mask` },
  }
}
