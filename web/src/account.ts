/**
 * The signed-in sections: the allowance or credits line, job history, API keys (the secret shown
 * once, with a copy button) and webhook endpoints (the signing secret shown once).
 */
import { describeError, type Job, requestJson, type Schemas } from './api'
import { deliveriesPanel } from './deliveries'
import { busy, byId, formatDate, h, showError } from './dom'
import { editorUrl } from './editor-link'

type Usage = Schemas['Usage']
type ApiKey = Schemas['ApiKey']
type Endpoint = Schemas['WebhookEndpoint']

/** The line above the tool: anonymous previews left today, or the workspace's credits. */
export async function refreshAllowance(signedIn: boolean): Promise<void> {
  const line = byId('allowance')
  try {
    const usage = await requestJson<Usage>('/v1/usage', { anonymous: !signedIn })
    line.textContent =
      usage.kind === 'anonymous'
        ? `Free preview: ${usage.remaining} of ${usage.limit} left today (results up to 0.25 MP). Sign in for full resolution.`
        : `${usage.available} of ${usage.limit} credits available this period${usage.held ? ` (${usage.held} held by running jobs)` : ''}.`
  } catch (err) {
    line.textContent = describeError(err)
  }
}

export function setUpHistory(): { load(): Promise<void> } {
  const rows = byId('history-rows')
  const more = byId<HTMLButtonElement>('history-more')
  const error = byId('history-error')
  let cursor: string | null = null

  const page = async (reset: boolean) => {
    showError(error, null)
    try {
      const query = new URLSearchParams({ limit: '10', ...(cursor && !reset ? { cursor } : {}) })
      const list = await requestJson<{ jobs: Job[]; nextCursor: string | null }>(`/v1/jobs?${query}`)
      if (reset) rows.replaceChildren()
      rows.append(...list.jobs.map(historyRow))
      if (reset && list.jobs.length === 0) rows.append(h('tr', {}, h('td', { colspan: '3' }, 'No jobs yet.')))
      cursor = list.nextCursor
      more.hidden = !cursor
    } catch (err) {
      showError(error, describeError(err))
    }
  }
  more.addEventListener('click', () => void busy(more, () => page(false)))
  return { load: () => page(true) }
}

function historyRow(job: Job): HTMLTableRowElement {
  const status = job.status === 'failed' && job.error ? `failed: ${job.error.message}` : job.status
  const result = job.result ? h('a', { href: job.result.url, target: '_blank', rel: 'noopener' }, 'Open') : '—'
  const edit =
    job.kind === 'remove_background' && job.status === 'succeeded'
      ? h('a', { href: editorUrl(job.id), 'aria-label': `Edit the cutout of ${formatDate(job.createdAt)}` }, 'Edit')
      : null
  return h(
    'tr',
    {},
    h('td', {}, formatDate(job.createdAt)),
    h('td', {}, status),
    h('td', {}, result, edit && ' · ', edit),
  )
}

/**
 * A list of things whose secret is shown once at creation (API keys, webhook endpoints): load the
 * list, create from the form and reveal the secret with a copy button, delete with a question.
 */
interface SecretList<T> {
  /** The ids' prefix in the HTML: `<p>-list`, `<p>s-error`, `<p>-form`, `<p>-created`, `<p>-secret`, `<p>-copy`. */
  prefix: string
  load(): Promise<T[]>
  /** Creates one from the form's fields; resolves with the secret to show once. */
  create(): Promise<string>
  /** The list item's text content. */
  describe(item: T): (Node | string)[]
  /** The button's word and its accessible label, the question asked first, and the path to DELETE. */
  remove(item: T): { action: string; label: string; question: string; path: string }
}

function setUpSecretList<T>(spec: SecretList<T>): { load(): Promise<void> } {
  const list = byId(`${spec.prefix}-list`)
  const error = byId(`${spec.prefix}s-error`)
  const form = byId<HTMLFormElement>(`${spec.prefix}-form`)

  const load = async () => {
    try {
      list.replaceChildren(
        ...(await spec.load()).map((item) => h('li', {}, ...spec.describe(item), removeButton(item))),
      )
    } catch (err) {
      showError(error, describeError(err))
    }
  }
  const removeButton = (item: T) => {
    const { action, label, question, path } = spec.remove(item)
    const button = h('button', { type: 'button', class: 'secondary', 'aria-label': label }, action)
    button.addEventListener('click', () => {
      if (!confirm(question)) return
      void busy(button, async () => {
        try {
          await requestJson(path, { method: 'DELETE' })
          await load()
        } catch (err) {
          showError(error, describeError(err))
        }
      })
    })
    return button
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void busy(form.querySelector('button')!, async () => {
      showError(error, null)
      try {
        const secret = await spec.create()
        byId(`${spec.prefix}-secret`).textContent = secret
        byId(`${spec.prefix}-created`).hidden = false
        byId(`${spec.prefix}-copy`).focus()
        form.reset()
        await load()
      } catch (err) {
        showError(error, describeError(err))
      }
    })
  })
  const copy = byId<HTMLButtonElement>(`${spec.prefix}-copy`)
  copy.addEventListener('click', async () => {
    await navigator.clipboard.writeText(byId(`${spec.prefix}-secret`).textContent ?? '')
    copy.textContent = 'Copied'
    setTimeout(() => (copy.textContent = 'Copy'), 2000)
  })
  return { load }
}

export const setUpKeys = () =>
  setUpSecretList<ApiKey>({
    prefix: 'key',
    load: async () => (await requestJson<{ keys: ApiKey[] }>('/v1/api-keys')).keys,
    create: async () => {
      const name = byId<HTMLInputElement>('key-name').value.trim()
      const created = await requestJson<{ value: string }>('/v1/api-keys', {
        method: 'POST',
        json: name ? { name } : {},
      })
      return created.value
    },
    describe: (key) => [
      h(
        'span',
        { class: 'grow' },
        h('strong', {}, key.name || 'Unnamed key'),
        ` ${key.prefix}… · ${key.scopes.join(', ')}`,
      ),
      h(
        'span',
        { class: 'muted' },
        `created ${formatDate(key.createdAt)}, ${key.lastUsedAt ? `last used ${formatDate(key.lastUsedAt)}` : 'never used'}`,
      ),
    ],
    remove: (key) => ({
      action: 'Revoke',
      label: `Revoke ${key.name || key.prefix}`,
      question: `Revoke ${key.name || key.prefix}? Programs using it stop working at once.`,
      path: `/v1/api-keys/${key.id}`,
    }),
  })

export const setUpWebhooks = () =>
  setUpSecretList<Endpoint>({
    prefix: 'webhook',
    load: async () =>
      (await requestJson<{ endpoints: Endpoint[] }>('/v1/webhooks')).endpoints.filter((e) => !e.disabledAt),
    create: async () => {
      const url = byId<HTMLInputElement>('webhook-url').value.trim()
      return (await requestJson<{ secret: string }>('/v1/webhooks', { method: 'POST', json: { url } })).secret
    },
    describe: (endpoint) => [
      h('span', { class: 'grow' }, h('code', {}, endpoint.url)),
      h('span', { class: 'muted' }, endpoint.events.length ? endpoint.events.join(', ') : 'all events'),
      deliveriesPanel(endpoint.id),
    ],
    remove: (endpoint) => ({
      action: 'Delete',
      label: `Delete ${endpoint.url}`,
      question: `Stop sending events to ${endpoint.url}?`,
      path: `/v1/webhooks/${endpoint.id}`,
    }),
  })
