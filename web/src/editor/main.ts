/**
 * The editor page (/editor?job=<removal id> or ?project=<id>): signed in, it opens the project
 * made from a finished removal and shows its newest revision. Brush strokes are drawn live and
 * saved as a revision on release; Undo and Redo walk the revisions; AI refine (refine-panel.ts) sends points or a
 * box; Export renders the shown revision and downloads it. An edit after Undo starts from the
 * revision on show and drops the undone ones from Redo, as in any paint program (the API's
 * `restoreRevisionId`). A 409 from an edit made elsewhere is said, and the newest revision is loaded.
 */
import { CutoutProblem, describeError } from '../api'
import { byId, showError } from '../dom'
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
  listRevisions,
  type Project,
  projectFromJob,
  projectPhoto,
  type Revision,
  revisionMask,
  undoHistory,
} from './project'
import { type RefinePanel, setUpRefinePanel } from './refine-panel'
import { EditorView } from './view'

type Tool = 'restore' | 'erase' | 'foreground' | 'background' | 'box' | 'pan'

const status = byId('editor-status')
const error = byId('editor-error')
const view = new EditorView(byId<HTMLCanvasElement>('editor-canvas'))
view.onDraw = () => {
  byId('zoom-level').textContent = `${Math.round((view.scale / view.dpr) * 100)} %`
}

let project: Project
let refinePanel: RefinePanel
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
      refinePanel.showMarks()
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
      refinePanel.showMarks()
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
  void followProject(project.id, (event) => refinePanel.onProjectEvent(event), new AbortController().signal)
}

setUpHeader()
if (!loadSession()) {
  byId('editor-signed-out').hidden = false
} else {
  setUpPointer()
  setUpControls()
  refinePanel = setUpRefinePanel({
    view,
    project: () => project,
    base: () => editBase(),
    revisionCount: () => revisions.length,
    reload,
    onError: (message) => showError(error, message),
  })
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
