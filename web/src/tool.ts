/**
 * The "Remove a background" tool: pick or drop images, choose options, watch each one's stages,
 * then compare before/after and download. Several images at once run one after another, each
 * with its row in the list (queue.ts). Anonymous visitors use their daily previews; a signed-in
 * user spends workspace credits and gets full resolution.
 */
import { LOW_CONFIDENCE_CODE } from '../../src/contract/frames'
import { JOB_STAGES } from '../../src/contract/stages'
import { CutoutProblem, describeError } from './api'
import { setUpCompare } from './compare'
import { acceptFiles, byId, h, showError } from './dom'
import { createQueue, cutoutName, type QueueItem } from './queue'
import { editorUrl } from './editor-link'
import { createRemoval, downloadResult, finishRemoval, type RemovalOptions } from './remove'
import { loadSession } from './session'

/** Stages a person can see move; `complete` is shown as the result itself. */
const SHOWN_STAGES = JOB_STAGES.filter((s) => s !== 'complete')

/**
 * Problems after which the next images would fail the same way (out of credits or previews, or
 * rate limited): the rest of the list is not started, rather than each failing in turn.
 */
const STOPS_THE_QUEUE = new Set([402, 429])

export function setUpTool(onFinished: () => void): void {
  const input = byId<HTMLInputElement>('file')
  const drop = byId('drop')
  const error = byId('remove-error')
  const compare = setUpCompare()
  const queue = createQueue(byId<HTMLOListElement>('queue'), byId<HTMLButtonElement>('queue-clear'), (item) =>
    show(item),
  )
  const waiting: QueueItem[] = []
  let running = false

  const alphaMode = byId<HTMLSelectElement>('alpha-mode')
  alphaMode.addEventListener('change', () => {
    byId('threshold-label').hidden = alphaMode.value !== 'binary'
  })

  const show = (item: QueueItem) => {
    if (!item.result) return
    compare.show(item.result.before, item.result.after)
    showResult(item)
    queue.select(item)
  }

  /** One image through the API; resolves with the problem that should stop the rest, if any. */
  const run = async (item: QueueItem, several: boolean): Promise<CutoutProblem | null> => {
    showError(error, null)
    byId('result').hidden = true
    const stage = (name: string, status: string) => {
      showStage(name, status)
      queue.set(item, 'running', status)
    }
    stage('queued', 'Uploading…')
    const signedIn = Boolean(loadSession())
    try {
      const created = await createRemoval(item.file, readOptions(), signedIn)
      stage(created.stage, 'Queued')
      const end = await finishRemoval(created, signedIn, (event) => {
        if (event.data.stage) stage(event.data.stage, labelFor(event.data.stage))
      })
      const blob = await downloadResult(created, signedIn)
      const { width, height } = await createImageBitmap(blob)
      const result = {
        before: URL.createObjectURL(item.file),
        after: URL.createObjectURL(blob),
        width,
        height,
        jobId: signedIn ? created.id : undefined,
        confidence: end.confidence,
        uncertain: end.warnings?.find((w) => w.code === LOW_CONFIDENCE_CODE)?.message,
      }
      queue.finish(item, result)
      show(item)
      showStage('complete', 'Done')
      return null
    } catch (err) {
      byId('progress').hidden = true
      const message = describeError(err)
      queue.set(item, 'failed', message)
      showError(error, several ? `${item.file.name}: ${message}` : message)
      return err instanceof CutoutProblem && STOPS_THE_QUEUE.has(err.status) ? err : null
    }
  }

  const drain = async () => {
    running = true
    try {
      for (let item = waiting.shift(); item; item = waiting.shift()) {
        const stop = await run(item, waiting.length > 0 || queue.size() > 1)
        if (!stop) continue
        for (const rest of waiting.splice(0)) queue.set(rest, 'failed', `Not started: ${describeError(stop)}`)
      }
    } finally {
      running = false
      // Once per list rather than per image: an anonymous visitor has 30 requests a minute.
      onFinished()
    }
  }

  const enqueue = (files: FileList | null | undefined) => {
    for (const file of Array.from(files ?? [])) waiting.push(queue.add(file))
    if (!running && waiting.length) void drain()
  }

  acceptFiles(drop, input, enqueue)
}

function readOptions(): RemovalOptions {
  const value = (id: string) => byId<HTMLInputElement | HTMLSelectElement>(id).value
  const feather = Number(value('feather')) || 0
  return {
    quality: value('quality') as RemovalOptions['quality'],
    output: value('output') as RemovalOptions['output'],
    alpha:
      value('alpha-mode') === 'binary'
        ? { mode: 'binary', threshold: Number(value('threshold')), feather }
        : { mode: 'raw', feather },
  }
}

const labelFor = (stage: string) => `${stage[0].toUpperCase()}${stage.slice(1)}…`

/** Marks `stage` current, the ones before it done, and says what is happening. */
function showStage(stage: string, status: string): void {
  byId('progress').hidden = false
  const list = byId('stages')
  const at = stage === 'complete' ? SHOWN_STAGES.length : SHOWN_STAGES.indexOf(stage as (typeof SHOWN_STAGES)[number])
  list.replaceChildren(
    ...SHOWN_STAGES.map((s, i) =>
      h('li', { class: i < at ? 'done' : i === at ? 'current' : '', 'aria-current': i === at ? 'step' : undefined }, s),
    ),
  )
  byId('status').textContent = status
}

function showResult(item: QueueItem): void {
  if (!item.result) return
  const download = byId<HTMLAnchorElement>('download')
  download.href = item.result.after
  download.download = cutoutName(item.file.name)
  byId('result-size').textContent = `${item.result.width} × ${item.result.height} PNG`
  // The editor makes a project from the removal: signed in only (projects belong to a workspace).
  const edit = byId<HTMLAnchorElement>('edit')
  edit.hidden = !item.result.jobId
  if (item.result.jobId) edit.href = editorUrl(item.result.jobId)
  showConfidence(item.result)
  byId('result').hidden = false
}

/**
 * How sure the mask is, beside the result; when the removal carries `low_confidence`, the
 * warning's words and the way to correct it: the editor (signed in), or signing in to use it.
 */
function showConfidence(result: NonNullable<QueueItem['result']>): void {
  const confidence = byId('result-confidence')
  confidence.hidden = result.confidence === undefined
  confidence.textContent =
    result.confidence === undefined ? '' : `Mask confidence ${Math.round(result.confidence * 100)} %`
  const warning = byId('result-uncertain')
  warning.hidden = !result.uncertain
  if (!result.uncertain) {
    warning.replaceChildren()
    return
  }
  const fix = result.jobId
    ? h('a', { href: editorUrl(result.jobId), id: 'uncertain-edit' }, 'Open it in the editor')
    : h('a', { href: '/#sign-in' }, 'Sign in to use the editor')
  warning.replaceChildren(`${result.uncertain}. `, fix)
}
