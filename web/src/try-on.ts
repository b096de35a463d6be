/**
 * /try-on (experimental): a person photo and a garment photo become a `virtual_try_on` job
 * (SPEC.md §4 POST /v1/virtual-try-ons, multipart); its stages are followed over SSE, then the
 * result is shown with the job's warnings in words. Every result carries the experimental,
 * non-commercial notice (DESIGN.md §3 Virtual try-on), and the page says so before anything is sent.
 * The API does not echo the seed it picked, so the page picks one when none is typed and shows it.
 */
import { MAX_SEED } from '../../src/contract/catalog-limits'
import { TRYON_WARNINGS } from '../../src/contract/tryon-warnings'
import { describeError, type Job, request, requestJson } from './api'
import { busy, byId, h, showError, toggleSignedIn } from './dom'
import { followJob } from './events'
import { setUpRateWaitNotice } from './rate-wait'
import { onSession } from './session'
import { setUpSignIn } from './sign-in'
import { WARNING_SENTENCES } from './try-on-warnings'

/** A job's warning (a code and its message), as the API states it. */
type Notice = NonNullable<Job['warnings']>[number]

const form = byId<HTMLFormElement>('tryon-form')
const error = byId('tryon-error')
const status = byId('tryon-status')
let resultUrl: string | null = null

setUpRateWaitNotice()
setUpSignIn()
onSession((session) => toggleSignedIn(Boolean(session)))

/** Shows the chosen photo's name and a preview beside its picker. */
function watchPicker(part: 'person' | 'garment'): void {
  const input = byId<HTMLInputElement>(`tryon-${part}`)
  const preview = byId<HTMLImageElement>(`tryon-${part}-preview`)
  input.addEventListener('change', () => {
    const file = input.files?.[0]
    if (preview.src) URL.revokeObjectURL(preview.src)
    preview.hidden = !file
    if (!file) return
    preview.src = URL.createObjectURL(file)
    byId(`tryon-${part}-name`).textContent = file.name
  })
}
watchPicker('person')
watchPicker('garment')

/** A sentence per warning; a code the page does not know yet is shown with the API's own message. */
function showWarnings(warnings: Notice[]): void {
  byId('tryon-warnings').replaceChildren(
    ...warnings.map((w) =>
      h('li', { 'data-code': w.code }, WARNING_SENTENCES[w.code] ?? w.message, ' ', h('code', {}, w.code)),
    ),
  )
  byId('tryon-warnings-box').hidden = warnings.length === 0
}

/** A failed job's error in words: "no person found" gets its sentence rather than the raw message. */
function failure(job: Pick<Job, 'status' | 'error'>): Error {
  const message = job.error?.message ?? `The try-on ended ${job.status}`
  return new Error(message.includes(TRYON_WARNINGS.noPose) ? WARNING_SENTENCES[TRYON_WARNINGS.noPose] : message)
}

async function tryOn(person: File, garment: File, category: string, seed: number): Promise<void> {
  const body = new FormData()
  body.append('person', person, person.name)
  body.append('garment', garment, garment.name)
  body.append('options', JSON.stringify({ category, seed }))
  status.textContent = 'Uploading…'
  const created = await requestJson<Job>('/v1/virtual-try-ons', {
    method: 'POST',
    body,
    headers: { 'idempotency-key': crypto.randomUUID() },
  })
  status.textContent = 'Queued…'
  const end =
    created.status === 'succeeded'
      ? created
      : await followJob(created.id, false, (event) => {
          if (event.data.stage) status.textContent = `${event.data.stage[0].toUpperCase()}${event.data.stage.slice(1)}…`
        })
  if (end.status !== 'succeeded') throw failure(end)
  // The terminal event carries no warnings: the job itself does.
  const [job, result] = await Promise.all([
    requestJson<Job>(`/v1/jobs/${created.id}`),
    request(`/v1/jobs/${created.id}/result`).then((r) => r.blob()),
  ])
  if (resultUrl) URL.revokeObjectURL(resultUrl)
  resultUrl = URL.createObjectURL(result)
  byId<HTMLImageElement>('tryon-image').src = resultUrl
  byId('tryon-result-seed').textContent = String(seed)
  const download = byId<HTMLAnchorElement>('tryon-download')
  download.href = resultUrl
  download.download = `try-on-${seed}.png`
  showWarnings(job.warnings ?? [])
  byId('tryon-result').hidden = false
  status.textContent = 'Done.'
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  const person = byId<HTMLInputElement>('tryon-person').files?.[0]
  const garment = byId<HTMLInputElement>('tryon-garment').files?.[0]
  showError(error, null)
  if (!person || !garment) {
    showError(error, `Choose ${person ? 'a garment' : 'a person'} photo first.`)
    return
  }
  const typed = byId<HTMLInputElement>('tryon-seed').value.trim()
  // Picked here when none is typed, so the result can say which seed makes it again.
  const seed = typed === '' ? crypto.getRandomValues(new Uint32Array(1))[0] % (MAX_SEED + 1) : Number(typed)
  const category = byId<HTMLSelectElement>('tryon-category').value
  void busy(byId<HTMLButtonElement>('tryon-make'), async () => {
    byId('tryon-result').hidden = true
    try {
      await tryOn(person, garment, category, seed)
    } catch (err) {
      status.textContent = ''
      showError(error, describeError(err))
    }
  })
})
