/**
 * Projects and revisions through the public API (SPEC.md §4 Projects and editing; DESIGN.md §3
 * Projects): revision 1 from the removal, strokes rasterised by the real inference server at the
 * source's resolution, conflicts, reads, listing and deletion with the project's bytes.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { api, expectProblem, seedWorkspace, testBudget, usage } from './helpers'
import {
  createProject,
  download,
  inspect,
  mask,
  postRevision,
  type ProjectView,
  revise,
  type RevisionView,
  succeededRemoval,
} from './project-helpers'

const dot = (tool: 'restore' | 'erase') => ({ tool, points: [[0.5, 0.5]], size: 0.05 })

describe('projects', () => {
  it('starts from a succeeded removal with revision 1: the removal’s mask at the source’s size', async () => {
    const { key } = await seedWorkspace()
    const jobId = await succeededRemoval(key, 'astronaut.png')
    const res = await api('/v1/projects', { method: 'POST', key, json: { jobId, name: 'Astronaut' } })
    expect(res.status).toBe(201)
    const project = (await res.json()) as ProjectView
    expect(res.headers.get('location')).toBe(`/v1/projects/${project.id}`)
    expect(project).toMatchObject({
      name: 'Astronaut',
      sourceJobId: jobId,
      width: 512,
      height: 512,
      refinementsUsed: 0,
    })

    const revisions = (await (await api(project.links.revisions, { key })).json()) as { revisions: RevisionView[] }
    expect(revisions.revisions).toHaveLength(1)
    const [first] = revisions.revisions
    expect(first).toMatchObject({ id: project.currentRevisionId, number: 1, baseRevisionId: null, strokes: [] })
    const m = await mask(key, first)
    expect(m).toMatchObject({ format: 'png', width: 512, height: 512, channels: 1 })
    // The removal's own mask: the cutout's alpha, pixel for pixel (raw alpha, no feather). That
    // the model finds the astronaut is the inference server's tests' business (reference masks);
    // here the stub segmenter made it, so the mask must have both foreground and background.
    const cutout = await inspect(await download(key, `/v1/jobs/${jobId}/result`), 'image', true)
    expect([cutout.width, cutout.height]).toEqual([512, 512])
    const alpha = Uint8Array.from(atob(cutout.alpha ?? ''), (c) => c.charCodeAt(0))
    expect(m.plane.some((v) => v === 255) && m.plane.some((v) => v === 0), 'foreground and background').toBe(true)
    expect(
      m.plane.every((v, i) => v === alpha[i]),
      'revision 1 is the cutout’s alpha',
    ).toBe(true)
    expect(await usage(key)).toMatchObject({ used: 1, held: 0 })
  })

  it('refuses jobs that cannot start a project', async () => {
    const { key } = await seedWorkspace()
    const other = await seedWorkspace()
    const jobId = await succeededRemoval(other.key, 'astronaut.png')
    await expectProblem(await api('/v1/projects', { method: 'POST', key, json: { jobId } }), 404, 'job_not_found')
    await expectProblem(
      await api('/v1/projects', { method: 'POST', key, json: { jobId, extra: 1 } }),
      400,
      'invalid_input',
      'extra',
    )
    await expectProblem(
      await api('/v1/projects', { method: 'POST', key: other.key, json: {} }),
      400,
      'invalid_input',
      'jobId',
    )
    // The message says what is wrong with the job: its kind, or its status.
    const refusal = async () => {
      const res = await api('/v1/projects', { method: 'POST', key: other.key, json: { jobId } })
      return (await expectProblem(res, 400, 'invalid_input', 'jobId')).detail
    }
    await env.DB.prepare(`UPDATE jobs SET kind = 'virtual_try_on' WHERE id = ?`).bind(jobId).run()
    expect(await refusal()).toBe(`Expected a removal job, but job ${jobId} is a virtual_try_on job`)
    await env.DB.prepare(`UPDATE jobs SET kind = 'remove_background', status = 'failed' WHERE id = ?`).bind(jobId).run()
    expect(await refusal()).toBe(`Expected a succeeded removal job, but job ${jobId} is failed`)
  })
})

describe('revisions', () => {
  it('a restore dot at the centre makes the centre pixel 255, an erase dot makes it 0; stale bases get 409', async () => {
    const { key } = await seedWorkspace()
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    const erased = await revise(key, project.id, { baseRevisionId: project.currentRevisionId, strokes: [dot('erase')] })
    expect(erased).toMatchObject({ number: 2, baseRevisionId: project.currentRevisionId })
    expect((await mask(key, erased)).at(256, 256)).toBe(0)

    const restored = await revise(key, project.id, { baseRevisionId: erased.id, strokes: [dot('restore')] })
    expect(restored.number).toBe(3)
    const m = await mask(key, restored)
    expect(m.at(256, 256)).toBe(255)
    // Only the dot changed: far from it, the mask equals its base's.
    const base = await mask(key, erased)
    expect(m.at(40, 40)).toBe(base.at(40, 40))

    // Revision 2 is no longer the newest: editing it is a conflict, and nothing is recorded.
    const stale = await postRevision(key, project.id, { baseRevisionId: erased.id, strokes: [dot('erase')] })
    await expectProblem(stale, 409, 'revision_conflict')
    const current = (await (await api(project.links.self, { key })).json()) as ProjectView
    expect(current.currentRevisionId).toBe(restored.id)

    // Revisions are immutable and readable one by one.
    const read = await api(restored.links.self, { key })
    expect(await read.json()).toMatchObject({ id: restored.id, number: 3, strokes: [{ tool: 'restore', hardness: 1 }] })

    // Ten edits of the same base at once, more than the inference server admits at once (one
    // running, eight queued): each waits its turn, exactly one is recorded and the rest are 409.
    const racing = await Promise.all(
      Array.from({ length: 10 }, () =>
        postRevision(key, project.id, { baseRevisionId: restored.id, strokes: [dot('erase')] }),
      ),
    )
    const statuses = racing.map((res) => res.status).sort()
    expect(statuses).toEqual([201, ...Array(9).fill(409)])
    for (const res of racing.filter((r) => r.status === 409)) await expectProblem(res, 409, 'revision_conflict')
    const won = (await racing.find((r) => r.status === 201)!.json()) as { id: string; number: number }
    expect(won.number).toBe(4)
    expect(((await (await api(project.links.self, { key })).json()) as ProjectView).currentRevisionId).toBe(won.id)
  })

  it('a recipe-only revision keeps its base’s mask bytes; bad strokes and recipes are 400 naming the field', async () => {
    const { key } = await seedWorkspace()
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    const base = project.currentRevisionId
    const recipe = { version: 1, background: { type: 'color', color: '#FF000080' }, crop: true }
    const withRecipe = await revise(key, project.id, { baseRevisionId: base, recipe })
    expect(withRecipe.recipe).toEqual(recipe)
    const [a, b] = await Promise.all([
      download(key, `/v1/projects/${project.id}/revisions/${base}/mask`),
      download(key, withRecipe.links.mask),
    ])
    expect(b).toEqual(a)

    const cases: [unknown, string][] = [
      [{ baseRevisionId: withRecipe.id }, 'strokes'],
      [{ baseRevisionId: withRecipe.id, strokes: [{ ...dot('erase'), tool: 'blur' }] }, 'strokes.0.tool'],
      [{ baseRevisionId: withRecipe.id, strokes: [{ ...dot('erase'), points: [[1.5, 0.5]] }] }, 'strokes.0.points.0.0'],
      [{ baseRevisionId: withRecipe.id, strokes: [{ ...dot('erase'), size: 0 }] }, 'strokes.0.size'],
      [{ baseRevisionId: withRecipe.id, recipe: { version: 2 } }, 'recipe.version'],
      [
        { baseRevisionId: withRecipe.id, recipe: { version: 1, background: { type: 'color', color: 'red' } } },
        'recipe.background.color',
      ],
      [{ baseRevisionId: withRecipe.id, recipe: { version: 1, shadow: true } }, 'recipe.shadow'],
      [{ baseRevisionId: crypto.randomUUID(), strokes: [dot('erase')] }, 'baseRevisionId'],
    ]
    for (const [body, field] of cases) {
      await expectProblem(await postRevision(key, project.id, body), 400, 'invalid_input', field).catch((err) => {
        throw new Error(`${JSON.stringify(body)}: ${err.message}`)
      })
    }
  })

  it('undo, then edit: restoreRevisionId starts from an earlier revision’s mask and recipe, not the newest one', async () => {
    const { key } = await seedWorkspace()
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    const first = (await (
      await api(`${project.links.revisions}/${project.currentRevisionId}`, { key })
    ).json()) as RevisionView
    // Revision 2 erases a disc over most of the photo and sets a recipe: the step being undone.
    const recipe = { version: 1, background: { type: 'color', color: '#FF0000' } }
    const erased = await revise(key, project.id, {
      baseRevisionId: first.id,
      strokes: [{ tool: 'erase', points: [[0.5, 0.5]], size: 1 }],
      recipe,
    })
    const [m1, m2] = [await mask(key, first), await mask(key, erased)]

    // A dot near the corner that changes revision 1 whatever its mask is there.
    const [dx, dy] = [51, 51]
    const tool = m1.at(dx, dy) > 127 ? 'erase' : 'restore'
    const stroke = { tool, points: [[(dx + 0.5) / 512, (dy + 0.5) / 512]], size: 0.05 }
    const res = await postRevision(key, project.id, {
      baseRevisionId: erased.id,
      restoreRevisionId: first.id,
      strokes: [stroke],
    })
    expect(res.status, await res.clone().text()).toBe(201)
    const restored = (await res.json()) as RevisionView & { restoreRevisionId: string | null }
    // Numbered after the newest, based on it, started from revision 1, with revision 1's recipe (none).
    expect(restored).toMatchObject({ number: 3, baseRevisionId: erased.id, restoreRevisionId: first.id, recipe: null })
    const m3 = await mask(key, restored)
    expect(m3.at(dx, dy)).toBe(tool === 'erase' ? 0 : 255)
    expect(m3.at(dx, dy)).not.toBe(m1.at(dx, dy))
    // Outside the dot (radius 12.8 px, plus a pixel) revision 1's mask, pixel for pixel, so not revision 2's erase.
    let outside = 0
    let undone = 0
    for (let y = 0; y < 512; y++) {
      for (let x = 0; x < 512; x++) {
        if (Math.hypot(x - dx, y - dy) <= 14) continue
        outside += m3.at(x, y) === m1.at(x, y) ? 0 : 1
        undone += m3.at(x, y) === m2.at(x, y) ? 0 : 1
      }
    }
    expect(outside, 'pixels outside the stroke that differ from revision 1').toBe(0)
    expect(undone, 'pixels where revision 2’s erase is undone').toBeGreaterThan(1000)
    expect(await (await api(restored.links.self, { key })).json()).toMatchObject({ restoreRevisionId: first.id })
    expect(await (await api(erased.links.self, { key })).json()).toMatchObject({ restoreRevisionId: null })

    // No strokes: a plain restore of revision 2, its mask bytes and recipe, as the newest revision.
    const back = await revise(key, project.id, { baseRevisionId: restored.id, restoreRevisionId: erased.id })
    expect(back).toMatchObject({ number: 4, strokes: [], recipe })
    expect(await download(key, back.links.mask)).toEqual(await download(key, erased.links.mask))
  })

  it('a restore does not skip the conflict check: a stale base with restoreRevisionId is 409', async () => {
    const { key } = await seedWorkspace()
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    const first = project.currentRevisionId
    const second = await revise(key, project.id, { baseRevisionId: first, strokes: [dot('erase')] })
    await revise(key, project.id, { baseRevisionId: second.id, strokes: [dot('restore')] })
    // Revision 2 is no longer the newest, so this edit was made on a stale view of the project.
    const stale = await postRevision(key, project.id, {
      baseRevisionId: second.id,
      restoreRevisionId: first,
      strokes: [dot('erase')],
    })
    await expectProblem(stale, 409, 'revision_conflict')
    const revisions = (await (await api(project.links.revisions, { key })).json()) as { revisions: RevisionView[] }
    expect(revisions.revisions).toHaveLength(3)
  })

  it('a restoreRevisionId that is not a revision of this project is 400 naming the field, like a bad base', async () => {
    const { key } = await seedWorkspace()
    const jobId = await succeededRemoval(key, 'astronaut.png')
    const project = await createProject(key, jobId)
    const other = await createProject(key, jobId)
    for (const restoreRevisionId of [crypto.randomUUID(), other.currentRevisionId]) {
      const res = await postRevision(key, project.id, {
        baseRevisionId: project.currentRevisionId,
        restoreRevisionId,
        strokes: [dot('erase')],
      })
      const problem = await expectProblem(res, 400, 'invalid_input', 'restoreRevisionId')
      expect(problem.detail).toBe(`No revision ${restoreRevisionId} in this project`)
    }
    const res = await postRevision(key, project.id, {
      baseRevisionId: project.currentRevisionId,
      restoreRevisionId: 'revision-1',
    })
    expect((await expectProblem(res, 400, 'invalid_input', 'restoreRevisionId')).detail).toMatch(/UUID/i)
    const revisions = (await (await api(project.links.revisions, { key })).json()) as { revisions: RevisionView[] }
    expect(revisions.revisions).toHaveLength(1)
  })

  it(
    'the same strokes on a 12 MP source give the same mask bytes, at the source’s resolution',
    async () => {
      const { key } = await seedWorkspace()
      const jobId = await succeededRemoval(key, `${env.FIXTURE_ORIGIN}/generated/photo-12mp.jpg`)
      const strokes = [
        {
          tool: 'erase',
          points: [
            [0.1, 0.1],
            [0.4, 0.3],
            [0.7, 0.2],
          ],
          size: 0.03,
          hardness: 0.6,
          opacity: 0.9,
        },
        dot('restore'),
      ]
      const hashes: string[] = []
      for (let i = 0; i < 2; i++) {
        const project = await createProject(key, jobId)
        expect([project.width, project.height]).toEqual([4000, 3000])
        const revision = await revise(key, project.id, { baseRevisionId: project.currentRevisionId, strokes })
        const report = await inspect(await download(key, revision.links.mask))
        expect([report.width, report.height, report.channels]).toEqual([4000, 3000, 1])
        hashes.push(report.sha256)
      }
      expect(hashes[1]).toBe(hashes[0])
    },
    testBudget(3),
  )
})

describe('project reads and deletion', () => {
  it('lists newest first with a cursor, hides other workspaces’ projects, and deletes with the bytes', async () => {
    const { key } = await seedWorkspace()
    const jobId = await succeededRemoval(key, 'astronaut.png')
    const first = await createProject(key, jobId)
    const second = await createProject(key, jobId)
    const page1 = (await (await api('/v1/projects?limit=1', { key })).json()) as {
      projects: ProjectView[]
      nextCursor: string
    }
    expect(page1.projects.map((p) => p.id)).toEqual([second.id])
    const page2 = (await (await api(`/v1/projects?limit=1&cursor=${page1.nextCursor}`, { key })).json()) as {
      projects: ProjectView[]
      nextCursor: string | null
    }
    expect(page2.projects.map((p) => p.id)).toEqual([first.id])

    // GET /v1/jobs?projectId= finds the removal a project was made from; another workspace's finds nothing.
    const listed = async (query: string, k = key) =>
      ((await (await api(`/v1/jobs?${query}`, { key: k })).json()) as { jobs: { id: string }[] }).jobs.map((j) => j.id)
    expect(await listed(`projectId=${first.id}`)).toEqual([jobId])
    expect(await listed(`projectId=${crypto.randomUUID()}`)).toEqual([])
    expect(await listed('kind=remove_background')).toEqual([jobId])
    expect(await listed('kind=virtual_try_on')).toEqual([])

    const stranger = await seedWorkspace()
    expect(await listed(`projectId=${first.id}`, stranger.key)).toEqual([])
    await expectProblem(await api(first.links.self, { key: stranger.key }), 404, 'project_not_found')
    await expectProblem(await api(first.links.revisions, { key: stranger.key }), 404, 'project_not_found')

    const stored = await env.BUCKET.list({ prefix: `projects/${first.id}/` })
    expect(stored.objects.length).toBeGreaterThanOrEqual(2)
    expect((await api(first.links.self, { method: 'DELETE', key })).status).toBe(204)
    await expectProblem(await api(first.links.self, { key }), 404, 'project_not_found')
    expect((await env.BUCKET.list({ prefix: `projects/${first.id}/` })).objects).toEqual([])
    // The other project, and the removal it came from, are untouched.
    expect((await api(second.links.self, { key })).status).toBe(200)
    expect((await api(`/v1/jobs/${jobId}`, { key })).status).toBe(200)
  })

  it(
    'keeps its source and masks past the removal’s 24 h retention',
    async () => {
      const { key } = await seedWorkspace()
      const jobId = await succeededRemoval(key, 'astronaut.png')
      const project = await createProject(key, jobId)
      const { sweepExpiredResults } = await import('../../src/services/retention')
      await env.DB.prepare('UPDATE jobs SET expires_at = ? WHERE id = ?').bind(new Date(0).toISOString(), jobId).run()
      await sweepExpiredResults(env)
      await expectProblem(await api(`/v1/jobs/${jobId}/result`, { key }), 410, 'asset_expired')
      // A new project from the expired job cannot be made; the existing one still edits.
      await expectProblem(await api('/v1/projects', { method: 'POST', key, json: { jobId } }), 410, 'asset_expired')
      const revision = await revise(key, project.id, {
        baseRevisionId: project.currentRevisionId,
        strokes: [dot('erase')],
      })
      expect((await mask(key, revision)).at(256, 256)).toBe(0)
    },
    testBudget(1),
  )

  it('a revision mask missing from storage is 410 asset_expired, as every stored byte is (not a 500)', async () => {
    const { key } = await seedWorkspace()
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    const path = `${project.links.revisions}/${project.currentRevisionId}/mask`
    expect((await api(path, { key })).status).toBe(200)
    const row = await env.DB.prepare('SELECT mask_key FROM revisions WHERE id = ?')
      .bind(project.currentRevisionId)
      .first<{ mask_key: string }>()
    await env.BUCKET.delete(row!.mask_key)
    await expectProblem(await api(path, { key }), 410, 'asset_expired')
  })
})
