/**
 * The signed-in sections: the allowance or credits line, job history, API keys (the secret shown
 * once, with a copy button) and webhook endpoints (the signing secret shown once).
 */
import { describeError, type Job, requestJson } from './api'
import { busy, byId, formatDate, h, showError } from './dom'

interface Usage {
  kind?: 'workspace' | 'anonymous'
  available?: number
  held?: number
  limit?: number
  remaining?: number
  periodEndsAt?: string
}
interface ApiKey {
  id: string
  name: string
  prefix: string
  scopes: string[]
  createdAt: string
  lastUsedAt?: string | null
}
interface Endpoint {
  id: string
  url: string
  events: string[]
  createdAt: string
  disabledAt: string | null
}

/** The line above the tool: anonymous previews left today, or the workspace's credits. */
export async function refreshAllowance(signedIn: boolean): Promise<void> {
  const line = byId('allowance')
  try {
    const usage = await requestJson<Usage>('/v1/usage', { anonymous: !signedIn })
    line.textContent =
      usage.kind === 'anonymous'
        ? `Free preview: ${usage.remaining} of 7 left today (results up to 0.25 MP). Sign in for full resolution.`
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
  return h('tr', {}, h('td', {}, formatDate(job.createdAt)), h('td', {}, status), h('td', {}, result))
}

export function setUpKeys(): { load(): Promise<void> } {
  const list = byId('key-list')
  const error = byId('keys-error')
  const form = byId<HTMLFormElement>('key-form')

  const load = async () => {
    try {
      const { keys } = await requestJson<{ keys: ApiKey[] }>('/v1/api-keys')
      list.replaceChildren(...keys.map((key) => keyItem(key, load, error)))
    } catch (err) {
      showError(error, describeError(err))
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void busy(form.querySelector('button')!, async () => {
      showError(error, null)
      try {
        const name = byId<HTMLInputElement>('key-name').value.trim()
        const created = await requestJson<ApiKey & { value: string }>('/v1/api-keys', {
          method: 'POST',
          json: name ? { name } : {},
        })
        revealSecret('key-created', 'key-value', created.value)
        form.reset()
        await load()
      } catch (err) {
        showError(error, describeError(err))
      }
    })
  })
  setUpCopy('key-copy', 'key-value')
  return { load }
}

function keyItem(key: ApiKey, reload: () => Promise<void>, error: HTMLElement): HTMLLIElement {
  const revoke = h(
    'button',
    { type: 'button', class: 'secondary', 'aria-label': `Revoke ${key.name || key.prefix}` },
    'Revoke',
  )
  revoke.addEventListener('click', () => {
    if (!confirm(`Revoke ${key.name || key.prefix}? Programs using it stop working at once.`)) return
    void busy(revoke, async () => {
      try {
        await requestJson(`/v1/api-keys/${key.id}`, { method: 'DELETE' })
        await reload()
      } catch (err) {
        showError(error, describeError(err))
      }
    })
  })
  const used = key.lastUsedAt ? `last used ${formatDate(key.lastUsedAt)}` : 'never used'
  return h(
    'li',
    {},
    h(
      'span',
      { class: 'grow' },
      h('strong', {}, key.name || 'Unnamed key'),
      ` ${key.prefix}… · ${key.scopes.join(', ')}`,
    ),
    h('span', { class: 'muted' }, `created ${formatDate(key.createdAt)}, ${used}`),
    revoke,
  )
}

export function setUpWebhooks(): { load(): Promise<void> } {
  const list = byId('webhook-list')
  const error = byId('webhooks-error')
  const form = byId<HTMLFormElement>('webhook-form')

  const load = async () => {
    try {
      const { endpoints } = await requestJson<{ endpoints: Endpoint[] }>('/v1/webhooks')
      list.replaceChildren(...endpoints.filter((e) => !e.disabledAt).map((e) => endpointItem(e, load, error)))
    } catch (err) {
      showError(error, describeError(err))
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void busy(form.querySelector('button')!, async () => {
      showError(error, null)
      try {
        const url = byId<HTMLInputElement>('webhook-url').value.trim()
        const created = await requestJson<Endpoint & { secret: string }>('/v1/webhooks', {
          method: 'POST',
          json: { url },
        })
        revealSecret('webhook-created', 'webhook-secret', created.secret)
        form.reset()
        await load()
      } catch (err) {
        showError(error, describeError(err))
      }
    })
  })
  setUpCopy('webhook-copy', 'webhook-secret')
  return { load }
}

function endpointItem(endpoint: Endpoint, reload: () => Promise<void>, error: HTMLElement): HTMLLIElement {
  const remove = h('button', { type: 'button', class: 'secondary', 'aria-label': `Delete ${endpoint.url}` }, 'Delete')
  remove.addEventListener('click', () => {
    if (!confirm(`Stop sending events to ${endpoint.url}?`)) return
    void busy(remove, async () => {
      try {
        await requestJson(`/v1/webhooks/${endpoint.id}`, { method: 'DELETE' })
        await reload()
      } catch (err) {
        showError(error, describeError(err))
      }
    })
  })
  return h(
    'li',
    {},
    h('span', { class: 'grow' }, h('code', {}, endpoint.url)),
    h('span', { class: 'muted' }, endpoint.events.length ? endpoint.events.join(', ') : 'all events'),
    remove,
  )
}

function revealSecret(boxId: string, codeId: string, secret: string): void {
  byId(codeId).textContent = secret
  byId(boxId).hidden = false
  byId(boxId).querySelector('button')?.focus()
}

function setUpCopy(buttonId: string, codeId: string): void {
  const button = byId<HTMLButtonElement>(buttonId)
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(byId(codeId).textContent ?? '')
    button.textContent = 'Copied'
    setTimeout(() => (button.textContent = 'Copy'), 2000)
  })
}
