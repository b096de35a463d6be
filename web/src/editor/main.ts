/**
 * The editor page (/editor?job=<removal id> or ?project=<id>): signed in, it opens the project
 * made from a finished removal and shows its newest revision. Brush strokes are drawn live and
 * saved as a revision on release; Undo and Redo walk the revisions; AI refine sends points or a
 * box; Export renders the shown revision and downloads it. An edit after Undo starts from the
 * revision on show and drops the undone ones from Redo, as in any paint program (the API's
 * `restoreRevisionId`). A 409 from an edit made elsewhere is said, and the newest revision is loaded.
 */
import { CutoutProblem, describeError } from '../api'
import { byId, h, showError } from '../dom'
import { setUpHeader } from '../header'
import { loadSession } from '../session'
import { type BrushSettings, LiveStroke } from './brush'
import type { Mask } from './codecs'
import { setUpExport } from './export-form'
import {
  addStroke,
  type EditBase,
  followProject,
  getProject,
  getRefinement,
  listRevisions,
  type Project,
  type ProjectEvent,
  projectFromJob,
  projectPhoto,
  type Refinement,
  type Revision,
  refine,
  revisionMask,
  undoHistory,
} from './project'
import { EditorView } from './view'

type Tool = 'restore' | 'erase' | 'foreground' | 'background' | 'box' | 'pan'

const REFINE_STAGES = ['queued', 'refining', 'complete'] as const
/** How often a running refinement is read, beside its completion event on the project's stream. */
const REFINE_POLL_MS = 2000

const status = byId('editor-status')
const error = byId('editor-error')
const view = new EditorView(byId<HTMLCanvasElement>('editor-canvas'))
view.onDraw = () => {
  byId('zoom-level').textContent = `${Math.round((view.scale / view.dpr) * 100)} %`
}

let project: Project
/** Every revision of the project, oldest first. */
let all: Revision[] = []
/** The undo history: the newest revision and those it was made from, oldest first (see `undoHistory`). */
let revisions: Revision[] = []
/** The index in `revisions` of the revision on show (Undo and Redo move it). */
let shown = 0
const masks = new Map<string, Mask>()
/** Strokes drawn but not yet made into revisions, oldest first; shown over the mask. */
const pending: LiveStroke[] = []
/**
 * The revision on show when each pending stroke was drawn: after Undo, the one it starts from.
 * Undefined for a stroke drawn over an earlier pending one, which builds on that one's revision.
 */
const drawnOn = new Map<LiveStroke, string | undefined>()
let saving: Promise<void> = Promise.resolve()

const newest = () => revisions.length - 1
const say = (text: string) => {
  status.textContent = text
}

async function maskOf(revision: Revision): Promise<Mask> {
  let mask = masks.get(revision.id)
  if (!mask) {
    mask = await revisionMask(revision)
    masks.set(revision.id, mask)
  }
  return mask
}

/** Shows revision `index`; the view and the buttons follow. */
async function show(index: number): Promise<void> {
  shown = index
  view.mask = await maskOf(revisions[index])
  view.draw()
  const label = byId('revision')
  label.textContent =
    index === newest()
      ? `Revision ${index + 1} of ${revisions.length}`
      : `Revision ${index + 1} of ${revisions.length} (Redo to return; an edit here replaces the undone ones)`
  label.dataset.revisionId = revisions[index].id
  byId<HTMLButtonElement>('undo').disabled = index === 0
  byId<HTMLButtonElement>('redo').disabled = index === newest()
}

function setRevisions(list: Revision[]): void {
  all = list
  revisions = undoHistory(all)
}

/** Reads the revisions again and shows the newest (after a refinement, or an edit made elsewhere). */
async function reload(): Promise<void> {
  setRevisions(await listRevisions(project.id))
  await show(newest())
}

/**
 * An edit names the newest revision as its base (SPEC.md §4: how the API detects an edit made
 * elsewhere) and, when an older one is what the person sees after Undo, starts from that one.
 */
function editBase(from: string | undefined = revisions[shown].id): EditBase {
  const baseRevisionId = revisions[newest()].id
  return from && from !== baseRevisionId ? { baseRevisionId, restoreRevisionId: from } : { baseRevisionId }
}

function brush(tool: 'restore' | 'erase'): BrushSettings {
  const value = (id: string) => Number(byId<HTMLInputElement>(id).value)
  return {
    tool,
    size: value('brush-size'),
    hardness: value('brush-hardness') / 100,
    opacity: value('brush-opacity') / 100,
  }
}

/** The stroke becomes a revision on the newest one; strokes drawn meanwhile wait their turn. */
function save(stroke: LiveStroke): void {
  saving = saving.then(async () => {
    if (!pending.includes(stroke)) return // dropped by a conflict
    say('Saving the stroke…')
    try {
      const revision = await addStroke(project.id, editBase(drawnOn.get(stroke)), stroke.toStroke())
      masks.set(revision.id, await revisionMask(revision))
      setRevisions([...all, revision]) // after Undo, the undone revisions leave the history
      pending.splice(pending.indexOf(stroke), 1)
      drawnOn.delete(stroke)
      await show(newest())
      say(`Saved as revision ${revision.number}.`)
    } catch (err) {
      pending.length = 0
      drawnOn.clear()
      view.draw()
      if (err instanceof CutoutProblem && err.status === 409) {
        await reload()
        showError(
          error,
          `This project was changed elsewhere, so your stroke was not saved: revision ${revisions.length}, the newest, is now on show. Draw it again on this one.`,
        )
        say('')
      } else {
        showError(error, describeError(err))
      }
    }
  })
}

view.live = (m, k) => {
  let value = m
  for (const stroke of pending) value = stroke.apply(value, k)
  return value
}

function currentTool(): Tool {
  return (document.querySelector<HTMLInputElement>('input[name="tool"]:checked')?.value ?? 'restore') as Tool
}

function setUpPointer(): void {
  const canvas = view.canvas
  let drag: { tool: Tool; x: number; y: number; stroke?: LiveStroke } | null = null
  canvas.addEventListener('pointerdown', (event) => {
    if (!view.photo || event.button !== 0) return
    const tool = currentTool()
    const [x, y] = view.eventToPhoto(event)
    canvas.setPointerCapture(event.pointerId)
    drag = { tool, x: event.clientX, y: event.clientY }
    if (tool === 'restore' || tool === 'erase') {
      drag.stroke = new LiveStroke(brush(tool), view.photo.width, view.photo.height)
      drawnOn.set(drag.stroke, pending.length ? undefined : revisions[shown].id)
      pending.push(drag.stroke)
      drag.stroke.add(x, y)
    } else if (tool === 'box') {
      view.marks.box = { x0: x, y0: y, x1: x, y1: y }
    } else if (tool === 'foreground' || tool === 'background') {
      view.marks.points.push({ x, y, label: tool })
      showMarks()
    }
    view.draw()
  })
  canvas.addEventListener('pointermove', (event) => {
    const [x, y] = view.eventToPhoto(event)
    const tool = currentTool()
    view.cursor = tool === 'restore' || tool === 'erase' ? { x, y, r: brush(tool).size / 2 } : null
    if (!drag) return view.draw()
    if (drag.stroke) {
      if (drag.stroke.add(x, y)) view.draw()
    } else if (drag.tool === 'box' && view.marks.box) {
      view.marks.box.x1 = x
      view.marks.box.y1 = y
      view.draw()
    } else if (drag.tool === 'pan') {
      view.pan((event.clientX - drag.x) * view.dpr, (event.clientY - drag.y) * view.dpr)
      drag.x = event.clientX
      drag.y = event.clientY
    }
  })
  const end = () => {
    if (!drag) return
    // The last message goes once the gesture is over: hiding it sooner moves the canvas under the pointer.
    showError(error, null)
    if (drag.stroke) save(drag.stroke)
    if (drag.tool === 'box') {
      const box = view.marks.box
      // A click, not a drag: no box.
      if (box && Math.abs(box.x1 - box.x0) * view.scale < 4 && Math.abs(box.y1 - box.y0) * view.scale < 4)
        view.marks.box = null
      showMarks()
      view.draw()
    }
    drag = null
  }
  canvas.addEventListener('pointerup', end)
  canvas.addEventListener('pointerleave', () => {
    view.cursor = null
    view.draw()
  })
  canvas.addEventListener('pointercancel', end)
  canvas.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault()
      const box = canvas.getBoundingClientRect()
      const factor = Math.exp(-event.deltaY / 500)
      view.zoom(factor, (event.clientX - box.left) * view.dpr, (event.clientY - box.top) * view.dpr)
    },
    { passive: false },
  )
  canvas.addEventListener('keydown', (event) => {
    const step = 60 * view.dpr
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [step, 0],
      ArrowRight: [-step, 0],
      ArrowUp: [0, step],
      ArrowDown: [0, -step],
    }
    if (moves[event.key]) view.pan(...moves[event.key])
    else if (event.key === '+' || event.key === '=') view.zoom(1.25)
    else if (event.key === '-') view.zoom(0.8)
    else if (event.key === '0') view.fit()
    else return
    event.preventDefault()
  })
}

function showMarks(): void {
  const { points, box } = view.marks
  const keep = points.filter((p) => p.label === 'foreground').length
  const parts = [`${keep} keep`, `${points.length - keep} drop`, box ? 'a box' : 'no box']
  byId('refine-marks').textContent = `Marked: ${parts.join(', ')}.`
}

function setUpControls(): void {
  for (const id of ['brush-size', 'brush-hardness', 'brush-opacity']) {
    const input = byId<HTMLInputElement>(id)
    const out = byId(`${id}-out`)
    const unit = id === 'brush-size' ? ' px' : ' %'
    const update = () => {
      out.textContent = `${input.value}${unit}`
    }
    input.addEventListener('input', update)
    update()
  }
  byId('undo').addEventListener('click', () => void (shown > 0 && show(shown - 1)))
  byId('redo').addEventListener('click', () => void (shown < newest() && show(shown + 1)))
  document.addEventListener('keydown', (event) => {
    if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== 'z') return
    if (event.target instanceof HTMLInputElement && event.target.type !== 'range') return
    event.preventDefault()
    byId<HTMLButtonElement>(event.shiftKey ? 'redo' : 'undo').click()
  })
  byId('zoom-in').addEventListener('click', () => view.zoom(1.25))
  byId('zoom-out').addEventListener('click', () => view.zoom(0.8))
  byId('zoom-fit').addEventListener('click', () => view.fit())
  const backdrop = byId<HTMLSelectElement>('backdrop')
  const colour = byId<HTMLInputElement>('backdrop-color')
  const setBackdrop = () => {
    byId('backdrop-color-label').hidden = backdrop.value !== 'color'
    view.backdrop = backdrop.value === 'color' ? { type: 'color', color: colour.value } : { type: 'checkerboard' }
    view.draw()
  }
  backdrop.addEventListener('change', setBackdrop)
  colour.addEventListener('input', setBackdrop)
  const ghost = byId<HTMLInputElement>('ghost')
  ghost.addEventListener('change', () => {
    view.ghost = ghost.checked
    view.draw()
  })
  byId('refine-clear').addEventListener('click', () => {
    view.marks = { points: [], box: null }
    showMarks()
    view.draw()
  })
  byId('refine').addEventListener('click', () => void startRefinement())
  showMarks()
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
  const { points, box } = view.marks
  const photo = view.photo
  if (!photo) return
  showError(error, null)
  if (!points.length && !box) return showError(error, 'Add a keep or drop point, or draw a box, first.')
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
    const made = await refine(project.id, editBase(), body)
    showRefineStage('queued', 'Queued: it runs when the workspace has a free slot.')
    const ended = await new Promise<Pick<Refinement, 'status' | 'error'>>((resolve) => {
      waiting.set(made.id, resolve)
      // The stream says when it ends; reading it now and then shows when it starts, and covers a stream that dropped.
      const poll = async () => {
        if (!waiting.has(made.id)) return
        try {
          const now = await getRefinement(project.id, made.id)
          if (now.status === 'processing') showRefineStage('refining', 'Refining: the model looks again at the region.')
          if (now.status !== 'queued' && now.status !== 'processing') return settle(made.id, now)
        } catch {
          // the next read or the stream will tell
        }
        setTimeout(poll, REFINE_POLL_MS)
      }
      setTimeout(poll, REFINE_POLL_MS)
    })
    if (ended.status !== 'succeeded') throw new Error(ended.error?.message ?? `The refinement ended ${ended.status}`)
    await reload()
    view.marks = { points: [], box: null }
    showMarks()
    showRefineStage('complete', `Done: revision ${revisions.length} is the refined one.`)
  } catch (err) {
    byId('refine-status').textContent = ''
    byId('refine-stages').hidden = true
    if (err instanceof CutoutProblem && err.code === 'revision_conflict') await reload()
    showError(error, describeError(err))
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
    settle(id, {
      status: s as Refinement['status'],
      error: e ? { code: 'refinement_failed', message: e.message } : null,
    })
}

/** The size slider reaches a quarter of the photo's longer side, and starts at a 50th of it. */
function fitBrushToPhoto(photo: ImageBitmap): void {
  const longer = Math.max(photo.width, photo.height)
  const size = byId<HTMLInputElement>('brush-size')
  size.max = String(Math.max(50, Math.round(longer / 4)))
  size.value = String(Math.max(5, Math.round(longer / 50)))
  size.dispatchEvent(new Event('input'))
}

async function open(): Promise<void> {
  const params = new URLSearchParams(location.search)
  const jobId = params.get('job')
  const projectId = params.get('project')
  if (!jobId && !projectId) {
    showError(error, 'Open the editor from a finished removal: Edit beside the result, or in History.')
    return
  }
  say('Opening the project…')
  project = projectId ? await getProject(projectId) : await projectFromJob(jobId!)
  history.replaceState(null, '', `/editor?project=${encodeURIComponent(project.id)}`)
  byId('editor-title').textContent = `Edit: ${project.name}`
  setRevisions(await listRevisions(project.id))
  say('Loading the photo and its mask…')
  const [photo] = await Promise.all([projectPhoto(project, revisions[0].id), maskOf(revisions[newest()])])
  view.photo = photo
  fitBrushToPhoto(photo)
  byId('editor').hidden = false
  view.fit()
  await show(newest())
  say(`${project.width} × ${project.height} px.`)
  byId('editor').dataset.ready = 'true'
  void followProject(project.id, onProjectEvent, new AbortController().signal)
}

setUpHeader()
if (!loadSession()) {
  byId('editor-signed-out').hidden = false
} else {
  setUpPointer()
  setUpControls()
  setUpExport({
    project: () => project,
    revision: () => revisions[shown],
    onError: (message) => showError(error, message),
  })
  open().catch((err) => {
    say('')
    showError(error, describeError(err))
  })
}
