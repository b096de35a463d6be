/**
 * Helpers for the project tests: a succeeded removal to start from, the project calls, and
 * reading returned files through the fixture server's inspector (sharp, fflate, ag-psd in Node).
 */
import { env } from 'cloudflare:test'
import type { ImageReport } from '../helpers/file-report'
import { api, fixtureBytes, modelBudget, RAW_CUTOUT, removal, settled, TERMINAL, uploadImage, waitFor } from './helpers'

export interface ProjectView {
  id: string
  name: string
  sourceJobId: string
  width: number
  height: number
  currentRevisionId: string
  refinementsUsed: number
  links: { self: string; revisions: string; events: string }
}

export interface RevisionView {
  id: string
  number: number
  baseRevisionId: string | null
  strokes: unknown[]
  recipe: unknown
  links: { self: string; mask: string }
}

export type { ImageReport }

/** A succeeded removal of `source` (a fixture name, or a URL for `sourceUrl`). */
export async function succeededRemoval(key: string, source: string): Promise<string> {
  const body = source.startsWith('http')
    ? { sourceUrl: source, options: RAW_CUTOUT }
    : { uploadId: (await uploadImage(key, await fixtureBytes(source))).id, options: RAW_CUTOUT }
  const job = await settled(await removal(key, body, { wait: 8 }), { key }, modelBudget(2))
  if (job.status !== 'succeeded') throw new Error(`removal ${job.status}: ${JSON.stringify(job.error)}`)
  return job.id
}

export async function createProject(key: string, jobId: string): Promise<ProjectView> {
  const res = await api('/v1/projects', { method: 'POST', key, json: { jobId } })
  if (res.status !== 201) throw new Error(`create project: ${res.status} ${await res.text()}`)
  return (await res.json()) as ProjectView
}

export function postRevision(key: string, projectId: string, body: unknown) {
  return api(`/v1/projects/${projectId}/revisions`, { method: 'POST', key, json: body })
}

export async function revise(key: string, projectId: string, body: unknown): Promise<RevisionView> {
  const res = await postRevision(key, projectId, body)
  if (res.status !== 201) throw new Error(`revision: ${res.status} ${await res.text()}`)
  return (await res.json()) as RevisionView
}

/** Reads a returned file with the libraries a user would (file-inspector.ts). */
export async function inspect<T = ImageReport>(bytes: Uint8Array, as = 'image', pixels = false): Promise<T> {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/inspect?as=${as}${pixels ? '&pixels=1' : ''}`, {
    method: 'POST',
    body: bytes,
  })
  if (res.status !== 200) throw new Error(`inspect ${as}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

export async function download(key: string | undefined, path: string): Promise<Uint8Array> {
  const res = await api(path, key ? { key } : {})
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
  return new Uint8Array(await res.arrayBuffer())
}

/** A revision's mask: its report and its pixels as one plane. */
export async function mask(key: string, revision: RevisionView) {
  const report = await inspect(await download(key, revision.links.mask), 'image', true)
  const plane = Uint8Array.from(atob(report.channel0 ?? ''), (c) => c.charCodeAt(0))
  return { ...report, plane, at: (x: number, y: number) => plane[y * report.width + x] }
}

/** Waits (in D1) for an internal job to end and returns its status. */
export async function jobEnded(id: string, timeoutMs = modelBudget(2)): Promise<string> {
  let status = ''
  await waitFor(
    async () => {
      const row = await env.DB.prepare('SELECT status FROM jobs WHERE id = ?').bind(id).first<{ status: string }>()
      status = row?.status ?? ''
      return TERMINAL.includes(status)
    },
    `job ${id} to end`,
    timeoutMs,
  )
  return status
}

/** The tight box of pixels ≥ 8 in a plane. */
export function subjectBox(plane: Uint8Array, width: number, height: number) {
  let [x0, y0, x1, y1] = [width, height, -1, -1]
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (plane[y * width + x] < 8) continue
      x0 = Math.min(x0, x)
      y0 = Math.min(y0, y)
      x1 = Math.max(x1, x)
      y1 = Math.max(y1, y)
    }
  }
  return { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 }
}
