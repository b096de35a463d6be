/**
 * The editor page (/editor?job=<removal id> or ?project=<id>): signed in, it opens the project
 * made from a finished removal and shows its newest revision. Brush strokes are drawn live and
 * saved as a revision on release; a Keep or Drop click, or a box, is one refinement (clicks.ts),
 * sent at once; the clicks the revision on show descends from are drawn on it. Strokes and clicks
 * wait their turn in one queue, each on the revision the one before made, so the page never races
 * itself into a 409. Undo and Redo walk the revisions; Export renders the shown revision and
 * downloads it. An edit after Undo starts from the revision on show and drops the undone ones
 * from Redo, as in any paint program (the API's `restoreRevisionId`). A 409 from an edit made
 * elsewhere is said, and the newest revision is loaded.
 */
import { CutoutProblem, describeError } from '../api'
import { byId, showError } from '../dom'
import { setUpHeader } from '../header'
import { loadSession } from '../session'
import { type BrushSettings, LiveStroke } from './brush'
import { type ClickEdit, ClickTool } from './clicks'
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
import { setUpPointer } from './pointer'
import { EditorView } from './view'

const status = byId('editor-status')
const error = byId('editor-error')
const view = new EditorView(byId<HTMLCanvasElement>('editor-canvas'))
view.onDraw = () => {
  byId('zoom-level').textContent = `${Math.round((view.scale / view.dpr) * 100)} %`
}

let project: Project
const clicks = new ClickTool({
  projectId: () => project.id,
  size: () => view.photo ?? { width: project.width, height: project.height },
  say: (text) => {
    byId('refine-status').textContent = text
  },
})
/** Every revision of the project, oldest first. */
let all: Revision[] = []
/** The undo history: the newest revision and those it was made from, oldest first (see `undoHistory`). */
let revisions: Revision[] = []
/** The index in `revisions` of the revision on show (Undo and Redo move it). */
let shown = 0
const masks = new Map<string, Mask>()
/** A stroke, or a click or box (a refinement). */
type Edit = LiveStroke | ClickEdit
/** Edits made but not yet revisions, oldest first; strokes are shown over the mask, clicks as markers. */
const pending: Edit[] = []
/**
 * The revision on show when each pending edit was made: after Undo, the one it starts from.
 * Undefined for an edit made while an earlier one was pending, which builds on that one's revision.
 */
const drawnOn = new Map<Edit, string | undefined>()
/** The edits' queue: each is sent once the one before has become a revision. */
let saving: Promise<void> = Promise.resolve()
/** Counts the markers' updates, so a slower earlier one does not overwrite a later one. */
let marking = 0

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

/** Shows revision `index`; the view, its markers and the buttons follow. */
async function show(index: number): Promise<void> {
  shown = index
  view.mask = await maskOf(revisions[index])
  view.draw()
  const label = byId('revision')
  // The step is this history's (Undo then an edit drops the undone ones); the revision number is the
  // API's, which keeps counting, and the one the messages and exports name.
  const where = `Step ${index + 1} of ${revisions.length} · revision ${revisions[index].number}`
  label.textContent = index === newest() ? where : `${where} (Redo to return; an edit here replaces the undone ones)`
  label.dataset.revisionId = revisions[index].id
  byId<HTMLButtonElement>('undo').disabled = index === 0
  byId<HTMLButtonElement>('redo').disabled = index === newest()
  await showMarks()
}

/**
 * Draws the clicks the revision on show descends from (`revisions` up to it is its lineage: each
 * revision's `restoreRevisionId ?? baseRevisionId`, see `undoHistory`), so an undone click's
 * marker goes with it; and, faint, the clicks and boxes still on their way.
 */
async function showMarks(): Promise<void> {
  const at = ++marking
  const landed = await clicks.clicksOf(revisions.slice(0, shown + 1))
  if (at !== marking) return
  const waiting = pending.filter((e): e is ClickEdit => !(e instanceof LiveStroke))
  view.marks = {
    points: [...landed, ...waiting.flatMap((e) => (e.point ? [{ ...e.point, pending: true }] : []))],
    boxes: waiting.flatMap((e) => (e.box ? [e.box] : [])),
  }
  view.draw()
  const keep = landed.filter((p) => p.label === 'foreground').length
  byId('refine-marks').textContent =
    `Clicks on this revision: ${keep} keep, ${landed.length - keep} drop` +
    (waiting.length ? `; ${waiting.length} on the way.` : '.')
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

/** An edit is made: it starts from the revision on show, or from the pending one before it. */
function begin(edit: Edit): void {
  drawnOn.set(edit, pending.length ? undefined : revisions[shown].id)
  pending.push(edit)
}

/** The edit becomes a revision on the newest one; edits made meanwhile wait their turn. */
function commit(edit: Edit): void {
  void showMarks()
  // land() says its own failures; one in saying them (a reload that failed) must not stop the queue.
  saving = saving.then(() => land(edit)).catch((err) => showError(error, describeError(err)))
}

async function land(edit: Edit): Promise<void> {
  if (!pending.includes(edit)) return // dropped by an earlier failure
  const stroke = edit instanceof LiveStroke
  if (stroke) say('Saving the stroke…')
  try {
    const on = editBase(drawnOn.get(edit))
    const revision = stroke ? await addStroke(project.id, on, edit.toStroke()) : await clicks.run(edit, on)
    masks.set(revision.id, await revisionMask(revision))
    setRevisions([...all, revision]) // after Undo, the undone revisions leave the history
    pending.splice(pending.indexOf(edit), 1)
    drawnOn.delete(edit)
    await show(newest())
    if (stroke) say(`Saved as revision ${revision.number}.`)
    else clicks.say(`Done: revision ${revision.number} is the refined one.`)
  } catch (err) {
    // The edits after it were made on what it would have made: they go with it.
    pending.length = 0
    drawnOn.clear()
    clicks.say('')
    if (err instanceof CutoutProblem && err.code === 'revision_conflict') {
      await reload()
      showError(
        error,
        `This project was changed elsewhere, so your ${stroke ? 'stroke was' : 'click was'} not saved: revision ${revisions.length}, the newest, is now on show. Make it again on this one.`,
      )
      say('')
    } else {
      await show(shown)
      showError(error, describeError(err))
    }
  }
}

view.live = (m, k) => {
  let value = m
  for (const edit of pending) if (edit instanceof LiveStroke) value = edit.apply(value, k)
  return value
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
  clicks.used = project.refinementsUsed
  say(`${project.width} × ${project.height} px.`)
  byId('editor').dataset.ready = 'true'
  void followProject(project.id, (event) => clicks.onProjectEvent(event), new AbortController().signal)
}

setUpHeader()
if (!loadSession()) {
  byId('editor-signed-out').hidden = false
} else {
  setUpPointer(view, {
    brush,
    strokeStarted: begin,
    strokeEnded: commit,
    clicked: (point) => {
      const edit = { point }
      begin(edit)
      commit(edit)
    },
    boxed: (box) => {
      const edit = { box }
      begin(edit)
      commit(edit)
    },
    // The last message goes once the gesture is over: hiding it sooner moves the canvas under the pointer.
    ended: () => showError(error, null),
  })
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
