/**
 * /catalog: a marketplace photo from one to four reference shots (SPEC.md §4 Catalog images;
 * DESIGN.md §3 Catalog extra fields). The shots are dropped or picked, kept in their order (front,
 * back, side, detail) and reordered with buttons; the options are the API's multipart fields. The
 * result shows the seed the API used (`X-Generation-Seed`), and "Same again" sends the same shots,
 * options and seed, which makes the same bytes. Below, the workspace's recent catalog photos
 * (`GET /v1/catalog-images`).
 */
import { MAX_REFERENCES } from '../../src/contract/catalog-limits'
import type { components } from '../../sdk/src/schema'
import { describeError, request, requestJson } from './api'
import { acceptFiles, busy, byId, formatDate, h, showError, toggleSignedIn } from './dom'
import { setUpRateWaitNotice } from './rate-wait'
import { onSession, type Session } from './session'
import { setUpSignIn } from './sign-in'

/** What each place in the order means to the generator. */
const ROLES = ['Front', 'Back', 'Side', 'Detail'] as const

/** Everything a catalog photo is made from; "Same again" sends it unchanged, seed included. */
interface CatalogInputs {
  references: File[]
  prompt: string
  width: number
  height: number
  background: string
  shadow: string
  layout: string
  seed: number | null
}

/** A catalog photo as GET /v1/catalog-images lists it (the SDK's type, generated from /openapi.json). */
type CatalogImage = components['schemas']['CatalogImage']

const RECENT_SHOWN = 12

const input = byId<HTMLInputElement>('catalog-file')
const drop = byId('catalog-drop')
const list = byId<HTMLOListElement>('references')
const form = byId<HTMLFormElement>('catalog-form')
const error = byId('catalog-error')
const status = byId('catalog-status')
const again = byId<HTMLButtonElement>('catalog-again')

const references: { file: File; url: string }[] = []
/** The inputs of the photo on show, with the seed it was made with. */
let shown: CatalogInputs | null = null
let resultUrl: string | null = null
let workspaceId: string | null = null

acceptFiles(drop, input, addReferences)

/** Appends the files in the order given; those past the fourth are left out, saying so. */
function addReferences(files: FileList | null | undefined): void {
  const added = Array.from(files ?? [])
  const room = MAX_REFERENCES - references.length
  for (const file of added.slice(0, Math.max(room, 0))) references.push({ file, url: URL.createObjectURL(file) })
  showError(
    error,
    added.length > room
      ? `A catalog photo takes at most ${MAX_REFERENCES} shots (front, back, side, detail): ${added.length - Math.max(room, 0)} left out.`
      : null,
  )
  renderReferences()
}

/** Moves the shot at `from` by `by` places (−1 up, +1 down) and keeps the focus on its button. */
function move(from: number, by: -1 | 1): void {
  const to = from + by
  ;[references[from], references[to]] = [references[to], references[from]]
  renderReferences()
  const row = list.children[to]
  const same = row?.querySelector<HTMLButtonElement>(by < 0 ? '[data-move="up"]' : '[data-move="down"]')
  const other = row?.querySelector<HTMLButtonElement>(by < 0 ? '[data-move="down"]' : '[data-move="up"]')
  ;(same && !same.disabled ? same : other)?.focus()
}

function remove(at: number): void {
  URL.revokeObjectURL(references[at].url)
  references.splice(at, 1)
  renderReferences()
  input.focus()
}

function renderReferences(): void {
  list.replaceChildren(
    ...references.map(({ file, url }, i) => {
      const role = ROLES[i]
      const button = (label: string, text: string, attrs: Record<string, string | boolean>, onClick: () => void) => {
        const b = h('button', { type: 'button', class: 'secondary', 'aria-label': label, ...attrs }, text)
        b.addEventListener('click', onClick)
        return b
      }
      return h(
        'li',
        { 'data-role': role.toLowerCase() },
        h('span', { class: 'role' }, role),
        h('img', { class: 'thumb', src: url, alt: '' }),
        h('span', { class: 'name' }, file.name),
        h(
          'span',
          { class: 'actions' },
          button(`Move ${file.name} up`, '↑ Up', { 'data-move': 'up', disabled: i === 0 }, () => move(i, -1)),
          button(
            `Move ${file.name} down`,
            '↓ Down',
            { 'data-move': 'down', disabled: i === references.length - 1 },
            () => move(i, 1),
          ),
          button(`Remove ${file.name}`, 'Remove', {}, () => remove(i)),
        ),
      )
    }),
  )
  list.hidden = references.length === 0
}

function readInputs(): CatalogInputs {
  const value = (id: string) => byId<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(id).value
  const [width, height] = value('catalog-size').split('x').map(Number)
  const seed = value('catalog-seed').trim()
  return {
    references: references.map((r) => r.file),
    prompt: value('catalog-prompt'),
    width,
    height,
    background: value('catalog-background').toUpperCase(),
    shadow: value('catalog-shadow'),
    layout: value('catalog-layout'),
    // Sent as typed: the API says what is wrong with a seed out of range.
    seed: seed === '' ? null : Number(seed),
  }
}

/** The multipart body of POST /v1/catalog-images: the shots in order, then the options. */
function formOf(inputs: CatalogInputs): FormData {
  const body = new FormData()
  for (const file of inputs.references) body.append('references', file, file.name)
  if (inputs.prompt) body.append('prompt', inputs.prompt)
  body.append('width', String(inputs.width))
  body.append('height', String(inputs.height))
  body.append('background', inputs.background)
  body.append('shadow', inputs.shadow)
  body.append('layout', inputs.layout)
  if (inputs.seed !== null) body.append('seed', String(inputs.seed))
  return body
}

async function make(inputs: CatalogInputs): Promise<void> {
  showError(error, null)
  status.textContent = `Making the photo from ${inputs.references.length} shot(s)…`
  try {
    const res = await request('/v1/catalog-images', {
      method: 'POST',
      body: formOf(inputs),
      headers: { 'idempotency-key': crypto.randomUUID() },
    })
    const id = res.headers.get('x-catalog-image-id') ?? ''
    const seed = Number(res.headers.get('x-generation-seed'))
    const blob = await res.blob()
    shown = { ...inputs, seed }
    showResult(blob, seed, `${inputs.width} × ${inputs.height}`)
    status.textContent = 'Done.'
    prependRecent(viewOf(id, seed, inputs), blob)
  } catch (err) {
    status.textContent = ''
    showError(error, describeError(err))
  }
}

/** The list entry of a photo just made, from its inputs and headers (no second request). */
function viewOf(id: string, seed: number, inputs: CatalogInputs): CatalogImage {
  const { width, height, prompt, background } = inputs
  return {
    id,
    seed,
    width,
    height,
    prompt,
    background,
    references: inputs.references.length,
    layout: inputs.layout as CatalogImage['layout'],
    shadow: inputs.shadow as CatalogImage['shadow'],
    createdAt: new Date().toISOString(),
    expiresAt: null,
    expired: false,
    links: { self: `/v1/catalog-images/${id}` },
  }
}

function showResult(blob: Blob, seed: number, size: string): void {
  if (resultUrl) URL.revokeObjectURL(resultUrl)
  resultUrl = URL.createObjectURL(blob)
  byId<HTMLImageElement>('catalog-image').src = resultUrl
  byId('catalog-result-seed').textContent = String(seed)
  byId('catalog-result-size').textContent = `${size} PNG`
  const download = byId<HTMLAnchorElement>('catalog-download')
  download.href = resultUrl
  download.download = `catalog-${seed}.png`
  byId('catalog-result').hidden = false
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  if (references.length === 0) {
    showError(error, 'Add at least one shot of the product (the front first).')
    input.focus()
    return
  }
  void busy(byId<HTMLButtonElement>('catalog-make'), () => make(readInputs()))
})

again.addEventListener('click', () => {
  if (shown) void busy(again, () => make(shown as CatalogInputs))
})

// The recent photos: the workspace's, from GET /v1/catalog-images; each PNG is read with the session.
const recentList = () => byId('recent-list')

function recentItem(made: CatalogImage, url: string | null): HTMLLIElement {
  const label = `Catalog shot, seed ${made.seed}, made ${formatDate(made.createdAt)}`
  return h(
    'li',
    { 'data-id': made.id },
    url ? h('img', { src: url, alt: label }) : h('p', { class: 'muted' }, 'Expired (kept 24 hours)'),
    h('span', {}, `Seed ${made.seed} · ${made.width} × ${made.height}`),
    h('span', { class: 'muted' }, formatDate(made.createdAt)),
    url
      ? h('a', { href: url, download: `catalog-${made.seed}.png`, 'aria-label': `Download ${label}` }, 'Download')
      : null,
  )
}

/** Puts the photo just made first in the list, with the bytes already in hand. */
function prependRecent(made: CatalogImage, blob: Blob): void {
  recentList().querySelector('[data-empty]')?.remove()
  recentList().prepend(recentItem(made, URL.createObjectURL(blob)))
}

/** The newest of the workspace's catalog photos; one past its 24 hours says so instead. */
async function loadRecent(): Promise<void> {
  const recentError = byId('recent-error')
  showError(recentError, null)
  try {
    const { catalogImages } = await requestJson<{ catalogImages: CatalogImage[] }>(
      `/v1/catalog-images?limit=${RECENT_SHOWN}`,
    )
    const items = await Promise.all(
      catalogImages.map(async (made) => {
        if (made.expired) return recentItem(made, null)
        const res = await request(made.links.self)
        return recentItem(made, URL.createObjectURL(await res.blob()))
      }),
    )
    recentList().replaceChildren(...items)
    if (!items.length) recentList().append(h('li', { class: 'muted', 'data-empty': true }, 'None yet.'))
  } catch (err) {
    showError(recentError, describeError(err))
  }
}

// Last: the session listener runs at once and reads the recent list, declared above.
setUpRateWaitNotice()
setUpSignIn()
onSession((session: Session | null) => {
  toggleSignedIn(Boolean(session))
  const next = session?.workspace.id ?? null
  if (next === workspaceId) return
  workspaceId = next
  if (workspaceId) void loadRecent()
})
