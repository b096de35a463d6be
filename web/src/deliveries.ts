/**
 * A webhook endpoint's recent deliveries (`GET /v1/webhooks/{id}/deliveries`, the latest 100
 * attempts) in a disclosure under the endpoint, loaded when first opened: what was sent, whether
 * the receiver took it (its HTTP status or the error), and Replay
 * (`POST /v1/webhooks/{endpointId}/deliveries/{deliveryId}/replay`, which keeps the delivery id so
 * the receiver can deduplicate). This is where a developer looks when their receiver misbehaved.
 */
import { describeError, requestJson, type Schemas } from './api'
import { busy, formatDate, h, showError } from './dom'

type Delivery = Schemas['WebhookDelivery']

/** What the receiver said: its status code, or the error when it never answered. */
const outcome = (d: Delivery) =>
  [d.status, d.responseStatus ? `HTTP ${d.responseStatus}` : null, d.lastError || null].filter(Boolean).join(' · ')

export function deliveriesPanel(endpointId: string): HTMLDetailsElement {
  const rows = h('tbody')
  const error = h('p', { class: 'error', role: 'alert', hidden: true })
  const empty = h('p', { class: 'muted', hidden: true }, 'Nothing sent yet.')
  const table = h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'Event'),
        h('th', {}, 'Outcome'),
        h('th', {}, 'Attempts'),
        h('th', {}, 'Last attempt'),
        h('th', {}),
      ),
    ),
    rows,
  )
  const refresh = h('button', { type: 'button', class: 'link' }, 'Refresh')
  const panel = h(
    'details',
    { class: 'deliveries' },
    h('summary', {}, 'Deliveries'),
    refresh,
    error,
    empty,
    h('div', { class: 'table-wrap' }, table),
  )

  const load = async () => {
    showError(error, null)
    try {
      const { deliveries } = await requestJson<{ deliveries: Delivery[] }>(`/v1/webhooks/${endpointId}/deliveries`)
      empty.hidden = deliveries.length > 0
      rows.replaceChildren(...deliveries.map(row))
    } catch (err) {
      showError(error, describeError(err))
    }
  }

  const row = (d: Delivery) => {
    const replay = h(
      'button',
      { type: 'button', class: 'secondary', 'aria-label': `Replay ${d.eventType ?? 'event'} ${d.id}` },
      'Replay',
    )
    replay.addEventListener('click', () =>
      busy(replay, async () => {
        try {
          await requestJson(`/v1/webhooks/${endpointId}/deliveries/${d.id}/replay`, { method: 'POST' })
          await load()
        } catch (err) {
          showError(error, describeError(err))
        }
      }),
    )
    const when = d.lastAttemptAt ?? d.createdAt
    return h(
      'tr',
      { 'data-delivery': d.id },
      h('td', {}, h('code', {}, d.eventType ?? 'event')),
      h('td', { class: `delivery-${d.status}` }, outcome(d)),
      h('td', {}, String(d.attempts)),
      h('td', {}, when ? formatDate(when) : '—'),
      h('td', {}, replay),
    )
  }

  let loaded = false
  panel.addEventListener('toggle', () => {
    if (panel.open && !loaded) {
      loaded = true
      void load()
    }
  })
  refresh.addEventListener('click', () => void busy(refresh, load))
  return panel
}
