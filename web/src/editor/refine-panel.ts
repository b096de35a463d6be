/**
 * The editor's AI refine panel: keep and drop points and a box marked on the canvas (the pointer
 * tools in main.ts), sent as a refinement of the revision on show; its stages shown as the
 * refinement runs, from the project's event stream and a read now and then; the refined revision
 * loaded when it ends.
 */
import { isTerminalStatus } from '../../../sdk/src/wait'
import { CutoutProblem, describeError } from '../api'
import { byId, h } from '../dom'
import { type EditBase, getRefinement, type Project, type ProjectEvent, type Refinement, refine } from './project'
import type { EditorView } from './view'

const REFINE_STAGES = ['queued', 'refining', 'complete'] as const
/** How often a running refinement is read, beside its completion event on the project's stream. */
const REFINE_POLL_MS = 2000

export interface RefinePanelDeps {
  view: EditorView
  project: () => Project
  /** What a refinement builds on: the revision on show. */
  base: () => EditBase
  /** How many revisions the project has (the refined one is the newest). */
  revisionCount: () => number
  /** Reads the project's revisions again and shows the newest. */
  reload: () => Promise<void>
  onError: (message: string | null) => void
}

export interface RefinePanel {
  /** Says what is marked for the next refinement. */
  showMarks(): void
  /** Hands a project event to the panel (a refinement it waits for may have ended). */
  onProjectEvent(event: ProjectEvent): void
}

export function setUpRefinePanel(deps: RefinePanelDeps): RefinePanel {
  function showMarks(): void {
    const { points, box } = deps.view.marks
    const keep = points.filter((p) => p.label === 'foreground').length
    const parts = [`${keep} keep`, `${points.length - keep} drop`, box ? 'a box' : 'no box']
    byId('refine-marks').textContent = `Marked: ${parts.join(', ')}.`
  }

  /** Refinements this page started and is waiting for, by id. */
  const waiting = new Map<string, (r: Pick<Refinement, 'status' | 'error'>) => void>()

  function showRefineStage(stage: (typeof REFINE_STAGES)[number], text: string): void {
    const list = byId('refine-stages')
    list.hidden = false
    const at = REFINE_STAGES.indexOf(stage)
    list.replaceChildren(
      ...REFINE_STAGES.map((s, i) =>
        h(
          'li',
          {
            class: i < at || stage === 'complete' ? 'done' : i === at ? 'current' : '',
            'aria-current': i === at ? 'step' : undefined,
          },
          s,
        ),
      ),
    )
    byId('refine-status').textContent = text
  }

  async function startRefinement(): Promise<void> {
    const button = byId<HTMLButtonElement>('refine')
    const { points, box } = deps.view.marks
    const photo = deps.view.photo
    if (!photo) return
    deps.onError(null)
    if (!points.length && !box) return deps.onError('Add a keep or drop point, or draw a box, first.')
    const unit = (v: number) => Math.min(1, Math.max(0, v))
    const body: Parameters<typeof refine>[2] = {}
    if (points.length)
      body.points = points.map((p) => ({ x: unit(p.x / photo.width), y: unit(p.y / photo.height), label: p.label }))
    if (box) {
      const x = unit(Math.min(box.x0, box.x1) / photo.width)
      const y = unit(Math.min(box.y0, box.y1) / photo.height)
      body.box = {
        x,
        y,
        width: unit(Math.max(box.x0, box.x1) / photo.width) - x,
        height: unit(Math.max(box.y0, box.y1) / photo.height) - y,
      }
    }
    button.disabled = true
    try {
      const made = await refine(deps.project().id, deps.base(), body)
      showRefineStage('queued', 'Queued: it runs when the workspace has a free slot.')
      const ended = await new Promise<Pick<Refinement, 'status' | 'error'>>((resolve) => {
        waiting.set(made.id, resolve)
        // The stream says when it ends; reading it now and then shows when it starts, and covers a stream that dropped.
        const poll = async () => {
          if (!waiting.has(made.id)) return
          try {
            const now = await getRefinement(deps.project().id, made.id)
            if (now.status === 'processing')
              showRefineStage('refining', 'Refining: the model looks again at the region.')
            if (isTerminalStatus(now.status)) return settle(made.id, now)
          } catch {
            // the next read or the stream will tell
          }
          setTimeout(poll, REFINE_POLL_MS)
        }
        setTimeout(poll, REFINE_POLL_MS)
      })
      if (ended.status !== 'succeeded') throw new Error(ended.error?.message ?? `The refinement ended ${ended.status}`)
      await deps.reload()
      deps.view.marks = { points: [], box: null }
      showMarks()
      showRefineStage('complete', `Done: revision ${deps.revisionCount()} is the refined one.`)
    } catch (err) {
      byId('refine-status').textContent = ''
      byId('refine-stages').hidden = true
      if (err instanceof CutoutProblem && err.code === 'revision_conflict') await deps.reload()
      deps.onError(describeError(err))
    } finally {
      button.disabled = false
    }
  }

  function settle(id: string, ended: Pick<Refinement, 'status' | 'error'>): void {
    const resolve = waiting.get(id)
    waiting.delete(id)
    resolve?.(ended)
  }

  function onProjectEvent(event: ProjectEvent): void {
    const { id, status: s, error: e } = event.data
    if (event.type === 'image.refinement.completed.v1' && id && waiting.has(id))
      settle(id, { status: s as Refinement['status'], error: e ?? null })
  }

  byId('refine-clear').addEventListener('click', () => {
    deps.view.marks = { points: [], box: null }
    showMarks()
    deps.view.draw()
  })
  byId('refine').addEventListener('click', () => void startRefinement())
  showMarks()
  return { showMarks, onProjectEvent }
}
