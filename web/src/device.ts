/**
 * /device (the verificationUri of the device flow): sign in, confirm the code the device shows
 * (prefilled from ?user_code=), choose the workspace it will act for, and approve.
 */
import { describeError, requestJson, type Schemas } from './api'
import { busy, byId, h, showError, toggleSignedIn } from './dom'
import { onSession } from './session'
import { setUpRateWaitNotice } from './rate-wait'
import { setUpSignIn } from './sign-in'

type Pending = Schemas['DeviceAuthorizationView']
type Workspace = Schemas['Workspace']

const form = byId<HTMLFormElement>('approve-form')
const codeInput = byId<HTMLInputElement>('user-code')
const select = byId<HTMLSelectElement>('workspace')
const error = byId('approve-error')
const client = byId('device-client')

codeInput.value = new URLSearchParams(location.search).get('user_code') ?? ''
setUpRateWaitNotice()
setUpSignIn()

onSession((session) => {
  toggleSignedIn(Boolean(session))
  if (session && select.options.length === 0) void Promise.all([loadWorkspaces(), describeCode()])
  if (!session) select.replaceChildren()
})

codeInput.addEventListener('change', () => void describeCode())

/** Names the client that asked, so a person can tell their own CLI from someone else's request. */
async function describeCode(): Promise<void> {
  const code = codeInput.value.trim()
  client.hidden = true
  if (!code) return
  try {
    const pending = await requestJson<Pending>(`/v1/device-authorizations/${encodeURIComponent(code)}`)
    const until = new Date(pending.expiresAt).toLocaleTimeString(undefined, { timeStyle: 'short' })
    client.textContent =
      pending.status === 'pending'
        ? `“${pending.client}” asks to sign in as you. The code works until ${until}.`
        : `This code was already approved for “${pending.client}”.`
    client.hidden = false
    showError(error, null)
  } catch (err) {
    showError(error, describeError(err))
  }
}

async function loadWorkspaces(): Promise<void> {
  try {
    const { workspaces } = await requestJson<{ workspaces: Workspace[] }>('/v1/workspaces')
    select.replaceChildren(
      ...workspaces.map((w) => h('option', { value: w.id, selected: w.current }, `${w.name} (${w.role})`)),
    )
    ;(codeInput.value ? select : codeInput).focus()
  } catch (err) {
    showError(error, describeError(err))
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  void busy(form.querySelector('button')!, async () => {
    showError(error, null)
    const code = codeInput.value.trim()
    try {
      await requestJson(`/v1/device-authorizations/${encodeURIComponent(code)}/approve`, {
        method: 'POST',
        json: { workspaceId: select.value },
      })
      form.hidden = true
      byId('approved-workspace').textContent = select.selectedOptions[0]?.textContent ?? ''
      byId('approved').hidden = false
    } catch (err) {
      showError(error, describeError(err))
    }
  })
})
