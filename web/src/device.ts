/**
 * /device (the verificationUri of the device flow): sign in, confirm the code the device shows
 * (prefilled from ?user_code=), choose the workspace it will act for, and approve.
 */
import { describeError, requestJson } from './api'
import { busy, byId, h, showError, toggleSignedIn } from './dom'
import { onSession } from './session'
import { setUpSignIn } from './sign-in'

interface Workspace {
  id: string
  name: string
  role: string
  current: boolean
}

const form = byId<HTMLFormElement>('approve-form')
const codeInput = byId<HTMLInputElement>('user-code')
const select = byId<HTMLSelectElement>('workspace')
const error = byId('approve-error')

codeInput.value = new URLSearchParams(location.search).get('user_code') ?? ''
setUpSignIn()

onSession((session) => {
  toggleSignedIn(Boolean(session))
  if (session && select.options.length === 0) void loadWorkspaces()
  if (!session) select.replaceChildren()
})

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
