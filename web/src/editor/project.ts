/**
 * The editor's calls to the API (SPEC.md §4 "Projects and editing"; DESIGN.md §3 Projects,
 * Refinements, Exports): open a project from a removal, read its revisions and their masks, add
 * a revision from a stroke, queue a refinement, render an export, and follow the project's event
 * stream. Only public endpoints: the page holds no rules of its own.
 */
import type { Recipe, Stroke } from '../../../src/contract/editing'
import { followEvents } from '../../../sdk/src/wait'
import { CutoutProblem, type Schemas, request, requestJson } from '../api'
import { envelope } from '../events'
import { decodeGrayPng, type Mask, unzipEntry } from './codecs'

export type Project = Schemas['Project']
export type Revision = Schemas['Revision']
export type Refinement = Schemas['Refinement']
export type Export = Schemas['Export']
export type ExportFormat = Export['format']
export type RefinementRequest = Omit<Schemas['RefinementCreate'], 'baseRevisionId' | 'restoreRevisionId'>
/**
 * What an edit builds on: the newest revision (or the API answers 409 revision_conflict), and,
 * after Undo, the earlier revision on show that it starts from instead.
 */
export interface EditBase {
  baseRevisionId: string
  restoreRevisionId?: string
}

const base = (id: string) => `/v1/projects/${encodeURIComponent(id)}`

/**
 * The project made from removal `jobId`. Its Idempotency-Key is the job's, so opening the editor
 * from the same removal again (within the key's 24 hours) replays that project, not a new one.
 */
export function projectFromJob(jobId: string): Promise<Project> {
  return requestJson<Project>('/v1/projects', {
    method: 'POST',
    json: { jobId },
    headers: { 'idempotency-key': `editor-project-${jobId}` },
  })
}

export const getProject = (id: string) => requestJson<Project>(base(id))

/** The project's revisions, oldest first (the API lists newest first). */
export async function listRevisions(id: string): Promise<Revision[]> {
  const { revisions } = await requestJson<{ revisions: Revision[] }>(`${base(id)}/revisions`)
  return revisions.sort((a, b) => a.number - b.number)
}

/**
 * The undo history of `revisions` (all of a project's, any order): the newest and the revisions
 * it was made from, back to revision 1, oldest first. Each started from the revision it restored
 * (an edit after Undo) or else its base, so steps undone and then drawn over are left out.
 */
export function undoHistory(revisions: Revision[]): Revision[] {
  const byId = new Map(revisions.map((r) => [r.id, r]))
  const history: Revision[] = []
  let at = revisions.reduce<Revision | undefined>((a, r) => (a && a.number > r.number ? a : r), undefined)
  while (at) {
    history.unshift(at)
    const from = at.restoreRevisionId ?? at.baseRevisionId
    at = from ? byId.get(from) : undefined
  }
  return history
}

export const getRevision = (projectId: string, id: string) =>
  requestJson<Revision>(`${base(projectId)}/revisions/${encodeURIComponent(id)}`)

export async function revisionMask(revision: Revision): Promise<Mask> {
  const res = await request(revision.links.mask)
  return decodeGrayPng(new Uint8Array(await res.arrayBuffer()))
}

/** A revision from one stroke on `on` (see {@link EditBase}). */
export function addStroke(projectId: string, on: EditBase, stroke: Stroke): Promise<Revision> {
  return requestJson<Revision>(`${base(projectId)}/revisions`, {
    method: 'POST',
    json: { ...on, strokes: [stroke] },
    headers: { 'idempotency-key': crypto.randomUUID() },
  })
}

export function refine(projectId: string, on: EditBase, body: RefinementRequest): Promise<Refinement> {
  return requestJson<Refinement>(`${base(projectId)}/refinements`, {
    method: 'POST',
    json: { ...on, ...body },
    headers: { 'idempotency-key': crypto.randomUUID() },
  })
}

export const getRefinement = (projectId: string, id: string) =>
  requestJson<Refinement>(`${base(projectId)}/refinements/${id}`)

/**
 * Renders `revisionId` and resolves once it has ended: within the request's bounded wait (201), or
 * by reading the export until it does (202). `key` names the request for replays.
 */
export async function renderExport(
  projectId: string,
  body: { revisionId: string; format: ExportFormat; recipe: Recipe },
  key: string = crypto.randomUUID(),
): Promise<Export> {
  let made = await requestJson<Export>(`${base(projectId)}/exports`, {
    method: 'POST',
    json: body,
    headers: { 'idempotency-key': key, prefer: 'wait=8' },
  })
  for (let delay = 500; made.status === 'queued' || made.status === 'processing'; delay = Math.min(3000, delay * 2)) {
    await new Promise((r) => setTimeout(r, delay))
    made = await requestJson<Export>(`${base(projectId)}/exports/${made.id}`)
  }
  if (made.status !== 'succeeded' || !made.result) {
    throw new Error(made.error?.message ?? `The export ended ${made.status}`)
  }
  return made
}

export async function exportBytes(made: Export): Promise<Blob> {
  if (!made.result) throw new Error('The export has no result')
  return (await request(made.result.url)).blob()
}

/**
 * The photo, upright at the project's size: the `color.jpg` of a zip export of revision 1 with no
 * recipe (the API serves no source of a project; any source format, HEIC too, comes back as a
 * JPEG a browser can show). The same key replays the same export; past its 24 hours a new one.
 */
export async function projectPhoto(project: Project, firstRevisionId: string): Promise<ImageBitmap> {
  const body = { revisionId: firstRevisionId, format: 'zip' as const, recipe: { version: 1 as const } }
  let zip: Blob
  try {
    zip = await exportBytes(await renderExport(project.id, body, `editor-photo-${project.id}`))
  } catch {
    zip = await exportBytes(await renderExport(project.id, body))
  }
  const jpeg = await unzipEntry(new Uint8Array(await zip.arrayBuffer()), 'color.jpg')
  return createImageBitmap(new Blob([jpeg as BlobPart], { type: 'image/jpeg' }))
}

export interface ProjectEvent {
  id: string
  type: string
  /** A refinement's event carries the refinement as GET …/refinements/{id} shows it (its error is a problem's code and message). */
  data: { id?: string; status?: string; revisionId?: string | null; error?: { code: string; message: string } | null }
}

/**
 * Follows `GET /v1/projects/{id}/events` until `signal` aborts, with the SDK's follower: the stream
 * stays open (a project has no end), and one that breaks off or is closed is reopened after the
 * last event seen (`Last-Event-ID`), backing off while it keeps failing. A project that is gone
 * (404) or no longer this session's (401, 403) is not asked again.
 */
export async function followProject(
  projectId: string,
  onEvent: (event: ProjectEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const open = async (lastEventId: string | undefined) => {
    try {
      const res = await request(`${base(projectId)}/events`, {
        signal,
        headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      })
      return res.body ?? undefined
    } catch (err) {
      // Refused for good: reopening would be refused again. Anything else is tried again.
      if (err instanceof CutoutProblem && !err.retryable) return undefined
      throw err
    }
  }
  await followEvents(open, {
    signal,
    reconnects: Number.POSITIVE_INFINITY,
    // The server ends a project's stream only when the project is deleted: reopen, and learn it.
    ended: () => false,
    onEvent: (sse) => {
      const event = envelope<ProjectEvent>(sse.data)
      if (event) onEvent(event)
    },
  })
}
