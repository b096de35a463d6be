/**
 * The "Remove a background" tool: pick or drop an image, choose options, watch the stages, then
 * compare before/after and download. Anonymous visitors use their daily previews; a signed-in
 * user spends workspace credits and gets full resolution.
 */
import { JOB_STAGES } from '../../src/contract/stages'
import { describeError } from './api'
import { setUpCompare } from './compare'
import { byId, h, showError } from './dom'
import { createRemoval, downloadResult, finishRemoval, type RemovalOptions } from './remove'
import { loadSession } from './session'

/** Stages a person can see move; `complete` is shown as the result itself. */
const SHOWN_STAGES = JOB_STAGES.filter((s) => s !== 'complete')

export function setUpTool(onFinished: () => void): void {
  const input = byId<HTMLInputElement>('file')
  const drop = byId('drop')
  const error = byId('remove-error')
  const compare = setUpCompare()
  let running = false
  let previous: string[] = []

  const alphaMode = byId<HTMLSelectElement>('alpha-mode')
  alphaMode.addEventListener('change', () => {
    byId('threshold-label').hidden = alphaMode.value !== 'binary'
  })

  const run = async (file: File) => {
    if (running) return
    running = true
    showError(error, null)
    byId('result').hidden = true
    for (const url of previous) URL.revokeObjectURL(url)
    previous = []
    showStage('queued', 'Uploading…')
    const signedIn = Boolean(loadSession())
    try {
      const created = await createRemoval(file, readOptions(), signedIn)
      showStage(created.stage, 'Queued')
      const job = await finishRemoval(created, signedIn, (event) => {
        if (event.data.stage) showStage(event.data.stage, labelFor(event.data.stage))
      })
      const blob = await downloadResult(job)
      const before = URL.createObjectURL(file)
      const after = URL.createObjectURL(blob)
      previous = [before, after]
      compare.show(before, after)
      await showResult(file.name, blob, after)
      showStage('complete', 'Done')
    } catch (err) {
      byId('progress').hidden = true
      showError(error, describeError(err))
    } finally {
      running = false
      input.value = ''
      onFinished()
    }
  }

  input.addEventListener('change', () => {
    const file = input.files?.[0]
    if (file) void run(file)
  })
  drop.addEventListener('dragover', (event) => {
    event.preventDefault()
    drop.classList.add('over')
  })
  drop.addEventListener('dragleave', () => drop.classList.remove('over'))
  drop.addEventListener('drop', (event) => {
    event.preventDefault()
    drop.classList.remove('over')
    const file = event.dataTransfer?.files[0]
    if (file) void run(file)
  })
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

async function showResult(name: string, blob: Blob, url: string): Promise<void> {
  const { width, height } = await createImageBitmap(blob)
  const download = byId<HTMLAnchorElement>('download')
  download.href = url
  download.download = `${name.replace(/\.[^.]+$/, '') || 'image'}-cutout.png`
  byId('result-size').textContent = `${width} × ${height} PNG`
  byId('result').hidden = false
}
