/**
 * Refinements and exports through the public API (DESIGN.md §3 Refinements, Exports): internal
 * jobs on the runner that cost no credit, report to webhooks and the project's stream, and whose
 * files open with the libraries a user would read them with.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { sweepExpiredResults } from '../../src/services/retention'
import { api, expectProblem, seedWorkspace, setInferenceMode, testBudget, usage, waitFor } from './helpers'
import {
  createProject,
  download,
  inspect,
  jobEnded,
  mask,
  type ProjectView,
  revise,
  type RevisionView,
  subjectBox,
  succeededRemoval,
} from './project-helpers'
import { readEvents } from './sse'
import { newReceiver, registerWebhook } from './webhook-helpers'

interface RefinementView {
  id: string
  status: string
  baseRevisionId: string
  revisionId: string | null
  error: { code: string } | null
}

interface ExportView {
  id: string
  status: string
  format: string
  result: { url: string; contentType: string } | null
}

const BOX = { x: 0.3, y: 0.1, width: 0.4, height: 0.35 }

function refine(key: string, projectId: string, body: unknown) {
  return api(`/v1/projects/${projectId}/refinements`, { method: 'POST', key, json: body })
}

function exportOf(key: string, projectId: string, body: unknown, wait?: number) {
  const headers: Record<string, string> = wait === undefined ? {} : { prefer: `wait=${wait}` }
  return api(`/v1/projects/${projectId}/exports`, { method: 'POST', key, json: body, headers })
}

/** An export followed to its end (201 within the wait, or 202 then polled). */
async function finishedExport(key: string, projectId: string, body: unknown): Promise<ExportView> {
  const res = await exportOf(key, projectId, body)
  expect([201, 202]).toContain(res.status)
  const created = (await res.json()) as ExportView
  expect(res.headers.get('location')).toBe(`/v1/projects/${projectId}/exports/${created.id}`)
  if (res.status === 201) {
    expect(created.status).toBe('succeeded')
    return created
  }
  await jobEnded(created.id)
  return (await (await api(`/v1/projects/${projectId}/exports/${created.id}`, { key })).json()) as ExportView
}

describe('refinements', () => {
  it(
    'a box refinement ends as a new revision that differs from its base only inside the box',
    async () => {
      const { key } = await seedWorkspace()
      const receiver = await newReceiver()
      await registerWebhook(key, receiver.url, ['image.refinement.completed.v1'])
      const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
      const before = await usage(key)

      const res = await refine(key, project.id, { baseRevisionId: project.currentRevisionId, box: BOX })
      expect(res.status).toBe(202)
      const queued = (await res.json()) as RefinementView
      expect(res.headers.get('location')).toBe(`/v1/projects/${project.id}/refinements/${queued.id}`)
      expect(queued).toMatchObject({ baseRevisionId: project.currentRevisionId, revisionId: null })
      expect(await jobEnded(queued.id)).toBe('succeeded')

      const done = (await (
        await api(`/v1/projects/${project.id}/refinements/${queued.id}`, { key })
      ).json()) as RefinementView
      expect(done).toMatchObject({ status: 'succeeded', error: null })
      const revision = (await (
        await api(`/v1/projects/${project.id}/revisions/${done.revisionId}`, { key })
      ).json()) as RevisionView
      expect(revision).toMatchObject({ number: 2, baseRevisionId: project.currentRevisionId })
      const [base, refined] = await Promise.all([
        mask(key, {
          links: { mask: `/v1/projects/${project.id}/revisions/${project.currentRevisionId}/mask` },
        } as RevisionView),
        mask(key, revision),
      ])
      const [x0, y0] = [Math.floor(BOX.x * 512), Math.floor(BOX.y * 512)]
      const [x1, y1] = [Math.ceil((BOX.x + BOX.width) * 512), Math.ceil((BOX.y + BOX.height) * 512)]
      let changedInside = 0
      for (let y = 0; y < 512; y++) {
        for (let x = 0; x < 512; x++) {
          const inside = x >= x0 && x < x1 && y >= y0 && y < y1
          if (!inside) expect(refined.at(x, y), `(${x}, ${y}) outside the box`).toBe(base.at(x, y))
          else if (refined.at(x, y) !== base.at(x, y)) changedInside++
        }
      }
      expect(changedInside).toBeGreaterThan(0)

      // No credit moved; the project counted it; webhooks heard of it.
      expect(await usage(key)).toEqual(before)
      expect(((await (await api(project.links.self, { key })).json()) as ProjectView).refinementsUsed).toBe(1)
      const [delivery] = await waitFor(async () => {
        const log = await receiver.log()
        return log.length ? log : null
      }, 'the refinement webhook')
      const event = JSON.parse(delivery.body)
      expect(event).toMatchObject({
        type: 'image.refinement.completed.v1',
        aggregateId: queued.id,
        data: { id: queued.id, projectId: project.id, status: 'succeeded', revisionId: revision.id },
      })
      // The project's stream replays it; refinements are not public jobs.
      const stream = await api(project.links.events, { key })
      expect(stream.headers.get('content-type')).toBe('text/event-stream')
      const [streamed] = await readEvents(stream, 1)
      expect(streamed).toMatchObject({
        event: 'image.refinement.completed.v1',
        data: { type: 'image.refinement.completed.v1', data: { id: queued.id } },
      })
      await expectProblem(await api(`/v1/jobs/${queued.id}`, { key }), 404, 'job_not_found')
      const jobs = (await (await api('/v1/jobs', { key })).json()) as { jobs: { kind: string }[] }
      expect(jobs.jobs.map((j) => j.kind)).toEqual(['remove_background'])
    },
    testBudget(3),
  )

  it(
    'undo, then refine: restoreRevisionId refines an earlier revision’s mask; a stale base is still 409, a bad restore id 400',
    async () => {
      const { key } = await seedWorkspace()
      const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
      const first = project.currentRevisionId
      // Revision 2 erases a disc over most of the photo: the step being undone.
      const erased = await revise(key, project.id, {
        baseRevisionId: first,
        strokes: [{ tool: 'erase', points: [[0.5, 0.5]], size: 1 }],
      })
      await expectProblem(
        await refine(key, project.id, { baseRevisionId: erased.id, restoreRevisionId: crypto.randomUUID(), box: BOX }),
        400,
        'invalid_input',
        'restoreRevisionId',
      )
      await expectProblem(
        await refine(key, project.id, { baseRevisionId: first, restoreRevisionId: first, box: BOX }),
        409,
        'revision_conflict',
      )
      const res = await refine(key, project.id, { baseRevisionId: erased.id, restoreRevisionId: first, box: BOX })
      expect(res.status, await res.clone().text()).toBe(202)
      const queued = (await res.json()) as RefinementView & { restoreRevisionId: string | null }
      expect(queued).toMatchObject({ baseRevisionId: erased.id, restoreRevisionId: first })
      expect(await jobEnded(queued.id)).toBe('succeeded')
      const done = (await (
        await api(`/v1/projects/${project.id}/refinements/${queued.id}`, { key })
      ).json()) as RefinementView
      const revision = (await (
        await api(`/v1/projects/${project.id}/revisions/${done.revisionId}`, { key })
      ).json()) as RevisionView & { restoreRevisionId: string | null }
      expect(revision).toMatchObject({ number: 3, baseRevisionId: erased.id, restoreRevisionId: first })
      const [m1, m2, refined] = await Promise.all([
        mask(key, { links: { mask: `/v1/projects/${project.id}/revisions/${first}/mask` } } as RevisionView),
        mask(key, erased),
        mask(key, revision),
      ])
      // Outside the box revision 1's mask, pixel for pixel, not revision 2's erase.
      const [x0, y0] = [Math.floor(BOX.x * 512), Math.floor(BOX.y * 512)]
      const [x1, y1] = [Math.ceil((BOX.x + BOX.width) * 512), Math.ceil((BOX.y + BOX.height) * 512)]
      let outside = 0
      let undone = 0
      for (let y = 0; y < 512; y++) {
        for (let x = 0; x < 512; x++) {
          if (x >= x0 && x < x1 && y >= y0 && y < y1) continue
          outside += refined.at(x, y) === m1.at(x, y) ? 0 : 1
          undone += refined.at(x, y) === m2.at(x, y) ? 0 : 1
        }
      }
      expect(outside, 'pixels outside the box that differ from revision 1').toBe(0)
      expect(undone, 'pixels where revision 2’s erase is undone').toBeGreaterThan(1000)
    },
    testBudget(3),
  )

  it(
    'the 21st refinement of a project is 429, failed ones give their place back; a stale base is 409; bad points and boxes are 400',
    async () => {
      const { key } = await seedWorkspace()
      const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
      const body = { baseRevisionId: project.currentRevisionId, points: [{ x: 0.5, y: 0.3, label: 'foreground' }] }
      await expectProblem(
        await refine(key, project.id, { baseRevisionId: project.currentRevisionId }),
        400,
        'invalid_input',
        'points',
      )
      await expectProblem(
        await refine(key, project.id, { ...body, box: { x: 0.8, y: 0, width: 0.5, height: 0.5 } }),
        400,
        'invalid_input',
        'box',
      )
      await expectProblem(
        await refine(key, project.id, { ...body, points: [{ x: 0.5, y: 0.5, label: 'maybe' }] }),
        400,
        'invalid_input',
        'points.0.label',
      )
      // The first refinements are held at their output until the cap is reached: a gate, so none
      // can end (and give its place back) while the 21st is asked for, however fast the server is.
      await setInferenceMode('hold-output')
      const accepted: string[] = []
      try {
        for (let i = 0; i < 20; i++) {
          const res = await refine(key, project.id, body)
          expect(res.status, `refinement ${i + 1}`).toBe(202)
          accepted.push(((await res.json()) as RefinementView).id)
        }
        const over = await expectProblem(await refine(key, project.id, body), 429, 'rate_limit_exceeded')
        expect(over.retryable).toBe(false)
      } finally {
        await setInferenceMode('normal') // lets the held ones go on
      }
      // The first to end makes revision 2; the others' base is then stale, and they fail saying so.
      const statuses = await Promise.all(accepted.slice(0, 3).map((id) => jobEnded(id)))
      expect(statuses).toContain('succeeded')
      const current = ((await (await api(project.links.self, { key })).json()) as ProjectView).currentRevisionId
      expect(current).not.toBe(project.currentRevisionId)
      await expectProblem(await refine(key, project.id, body), 409, 'revision_conflict')
      // Of those three only one could make revision 2; the others failed on their stale base and
      // made nothing, so they gave their places under the cap back.
      expect(statuses.filter((status) => status === 'failed').length).toBeGreaterThanOrEqual(2)
      const refined = (await (await api(project.links.self, { key })).json()) as ProjectView
      expect(refined.refinementsUsed).toBeLessThanOrEqual(18)
      const again = await refine(key, project.id, { ...body, baseRevisionId: refined.currentRevisionId })
      expect(again.status).toBe(202)
      // Deleting the project cancels what is still queued.
      expect((await api(project.links.self, { method: 'DELETE', key })).status).toBe(204)
      const left = await env.DB.prepare(
        `SELECT COUNT(*) AS n FROM jobs WHERE project_id = ? AND status IN ('queued','processing')`,
      )
        .bind(project.id)
        .first<{ n: number }>()
      expect(left?.n).toBe(0)
    },
    testBudget(4),
  )
})

describe('exports', () => {
  it(
    'renders png, webp, jpeg, zip and psd that open with sharp, fflate and ag-psd, at no credit',
    async () => {
      const { key } = await seedWorkspace()
      const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
      const before = await usage(key)
      const expected: Record<string, string> = {
        png: 'image/png',
        webp: 'image/webp',
        jpeg: 'image/jpeg',
        zip: 'application/zip',
        psd: 'image/vnd.adobe.photoshop',
      }
      for (const format of ['png', 'webp', 'jpeg']) {
        const done = await finishedExport(key, project.id, { format })
        expect(done.result?.contentType).toBe(expected[format])
        // The signed URL needs no key.
        const report = await inspect(await download(undefined, done.result!.url))
        expect(report).toMatchObject({ format, width: 512, height: 512 })
      }
      const zip = await finishedExport(key, project.id, { format: 'zip' })
      const unzipped = await inspect<{ files: { name: string; format: string; width: number; height: number }[] }>(
        await download(key, zip.result!.url),
        'zip',
      )
      expect(unzipped.files.map((f) => [f.name, f.format, f.width, f.height]).sort()).toEqual([
        ['alpha.png', 'png', 512, 512],
        ['color.jpg', 'jpeg', 512, 512],
      ])
      const psd = await finishedExport(key, project.id, { format: 'psd' })
      expect(psd.result?.contentType).toBe(expected.psd)
      const layers = await inspect<{
        width: number
        height: number
        layers: { name: string; hidden: boolean; hasMask: boolean }[]
      }>(await download(key, psd.result!.url), 'psd')
      expect([layers.width, layers.height]).toEqual([512, 512])
      expect(layers.layers).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'Original', hidden: true }),
          expect.objectContaining({ name: 'Cutout', hidden: false, hasMask: true }),
        ]),
      )
      expect(await usage(key)).toEqual(before)
    },
    testBudget(2),
  )

  it(
    'crop with a 20 px margin on red gives a JPEG of the subject box plus 40 px, red at the border',
    async () => {
      const { key } = await seedWorkspace()
      const receiver = await newReceiver()
      await registerWebhook(key, receiver.url, ['image.export.completed.v1'])
      const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
      // A subject of known shape: everything erased, then a disc restored.
      const cleared = await revise(key, project.id, {
        baseRevisionId: project.currentRevisionId,
        strokes: [
          {
            tool: 'erase',
            points: [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 1],
              [0, 0],
            ],
            size: 1,
          },
          { tool: 'restore', points: [[0.4, 0.6]], size: 0.2 },
        ],
      })
      const m = await mask(key, cleared)
      const box = subjectBox(m.plane, m.width, m.height)
      expect(box.width).toBeGreaterThan(90)
      const recipe = { version: 1, crop: true, margin: 20, background: { type: 'color', color: '#FF0000' } }
      const done = await finishedExport(key, project.id, { format: 'jpeg', recipe })
      const report = await inspect(await download(key, done.result!.url))
      expect([report.width, report.height]).toEqual([box.width + 40, box.height + 40])
      for (const [x, y, r, g, b] of report.border) {
        expect(r, `red at (${x}, ${y})`).toBeGreaterThan(230)
        expect(Math.max(g, b), `red at (${x}, ${y})`).toBeLessThan(25)
      }
      const [delivery] = await waitFor(async () => {
        const log = await receiver.log()
        return log.length ? log : null
      }, 'the export webhook')
      expect(JSON.parse(delivery.body)).toMatchObject({
        type: 'image.export.completed.v1',
        data: { id: done.id, projectId: project.id, status: 'succeeded', format: 'jpeg' },
      })
    },
    testBudget(1),
  )

  it('a revision’s recipe is the default; results expire after 24 h with 410; bad requests are 400, recipes too large to render 413', async () => {
    const { key } = await seedWorkspace()
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    const recipe = { version: 1, width: 100, height: 50 }
    const revision = await revise(key, project.id, { baseRevisionId: project.currentRevisionId, recipe })
    const done = await finishedExport(key, project.id, { format: 'png' })
    expect(done).toMatchObject({ revisionId: revision.id, recipe })
    expect(await inspect(await download(key, done.result!.url))).toMatchObject({ width: 100, height: 50 })

    await env.DB.prepare('UPDATE jobs SET expires_at = ? WHERE id = ?').bind(new Date(0).toISOString(), done.id).run()
    await sweepExpiredResults(env)
    await expectProblem(
      await api(`/v1/projects/${project.id}/exports/${done.id}/result`, { key }),
      410,
      'asset_expired',
    )
    const view = (await (await api(`/v1/projects/${project.id}/exports/${done.id}`, { key })).json()) as ExportView
    expect(view).toMatchObject({ status: 'succeeded', result: null })

    await expectProblem(await exportOf(key, project.id, { format: 'gif' }), 400, 'invalid_input', 'format')
    await expectProblem(
      await exportOf(key, project.id, { format: 'png', revisionId: crypto.randomUUID() }),
      400,
      'invalid_input',
      'revisionId',
    )
    await expectProblem(
      await exportOf(key, project.id, { format: 'png', recipe: { version: 1, margin: -1 } }),
      400,
      'invalid_input',
      'recipe.margin',
    )
    // A recipe SPEC.md allows but no render of this 512×512 source fits: 413 when asked, naming the
    // field that sizes it, and no export is made (it could only fail).
    const exports = () =>
      env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE project_id = ? AND kind = 'export'`)
        .bind(project.id)
        .first<number>('n')
    const made = await exports()
    for (const format of ['png', 'psd', 'zip']) {
      const huge = await exportOf(key, project.id, { format, recipe: { version: 1, width: 10_000, height: 10_000 } })
      const body = await expectProblem(huge, 413, 'image_too_large', 'recipe.width')
      expect(body.detail).toBe('Expected a rendered image of at most 50000000 pixels but the recipe makes 10000×10000')
    }
    const margin = await exportOf(key, project.id, { format: 'png', recipe: { version: 1, crop: true, margin: 5000 } })
    expect((await expectProblem(margin, 413, 'image_too_large', 'recipe.margin')).detail).toMatch(
      /the recipe makes at least 10001×10001$/,
    )
    expect(await exports()).toBe(made)

    const stranger = await seedWorkspace()
    await expectProblem(await exportOf(stranger.key, project.id, { format: 'png' }), 404, 'project_not_found')
    await expectProblem(
      await api(`/v1/projects/${project.id}/exports/${done.id}`, { key: stranger.key }),
      404,
      'export_not_found',
    )
  })
})
