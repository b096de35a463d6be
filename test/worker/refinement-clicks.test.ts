/**
 * A project keeps its clicks (DESIGN.md §3 Refinement clicks): each refinement is sent the points of
 * every earlier refinement its start revision descends from, so they still hold; a click that was
 * undone (its revision restored past) is not among them. The lineage is read from what real
 * refinements through the API stored.
 */
import { env } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { findRevision, lineagePoints } from '../../src/services/revisions'
import { api, seedWorkspace, testBudget } from './helpers'
import { createProject, jobEnded, succeededRemoval } from './project-helpers'

const point = (x: number, label: 'foreground' | 'background' = 'foreground') => ({ x, y: 0.5, label })

it(
  'the points of the refinements a revision descends from, oldest first; an undone one is left out',
  async () => {
    const { key } = await seedWorkspace()
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    const refine = async (baseRevisionId: string, points: ReturnType<typeof point>[], restoreRevisionId?: string) => {
      const res = await api(`/v1/projects/${project.id}/refinements`, {
        method: 'POST',
        key,
        json: { baseRevisionId, points, ...(restoreRevisionId ? { restoreRevisionId } : {}) },
      })
      expect(res.status, await res.clone().text()).toBe(202)
      const { id } = (await res.json()) as { id: string }
      expect(await jobEnded(id)).toBe('succeeded')
      const done = (await (await api(`/v1/projects/${project.id}/refinements/${id}`, { key })).json()) as {
        revisionId: string
      }
      return done.revisionId
    }
    const pointsOf = async (revisionId: string) =>
      lineagePoints(env.DB, await findRevision(env.DB, project.id, revisionId))

    const first = project.currentRevisionId
    expect(await pointsOf(first)).toEqual([])
    const a = await refine(first, [point(0.2)])
    const b = await refine(a, [point(0.3, 'background'), point(0.4)])
    expect(await pointsOf(b)).toEqual([point(0.2), point(0.3, 'background'), point(0.4)])
    // Undo both, then click: the new revision descends from revision 1 alone.
    const c = await refine(b, [point(0.6)], first)
    expect(await pointsOf(c)).toEqual([point(0.6)])
    // Undo to `a` from `c`: a's click holds again, c's does not.
    const d = await refine(c, [point(0.7)], a)
    expect(await pointsOf(d)).toEqual([point(0.2), point(0.7)])
  },
  testBudget(6),
)
