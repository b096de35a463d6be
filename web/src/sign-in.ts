/**
 * Email-code sign-in (DESIGN.md §3): the address, then the six-digit code. Shared by the main
 * page and /device. In local mode the code sits in the dev outbox; the hint pointing there only
 * appears when that outbox answers, which it never does in production.
 */
import { toSession } from '../../sdk/src/auth'
import { describeError, requestJson, type Schemas } from './api'
import { byId, busy, h, showError } from './dom'
import { setUpHeader } from './header'
import { saveSession } from './session'

type Verified = Schemas['Session']

/**
 * Adds the email and code forms, the local-mode hint and the error region to `#sign-in` (the
 * pages with that section differ only in its heading), then wires them and the site header.
 */
export function setUpSignIn(): void {
  byId('sign-in').append(...signInForms())
  const emailForm = byId<HTMLFormElement>('sign-in-email-form')
  const codeForm = byId<HTMLFormElement>('sign-in-code-form')
  const emailInput = byId<HTMLInputElement>('sign-in-email')
  const codeInput = byId<HTMLInputElement>('sign-in-code')
  const error = byId('sign-in-error')
  const hint = byId('sign-in-hint')
  setUpHeader()

  emailForm.addEventListener('submit', (event) => {
    event.preventDefault()
    const button = emailForm.querySelector('button')!
    void busy(button, async () => {
      showError(error, null)
      try {
        await requestJson('/v1/auth/email/start', {
          method: 'POST',
          json: { email: emailInput.value },
          anonymous: true,
        })
        codeForm.hidden = false
        byId('sign-in-sent-to').textContent = emailInput.value
        codeInput.focus()
        await showOutboxHint(hint, emailInput.value)
      } catch (err) {
        showError(error, describeError(err))
      }
    })
  })

  codeForm.addEventListener('submit', (event) => {
    event.preventDefault()
    const button = codeForm.querySelector('button')!
    void busy(button, async () => {
      showError(error, null)
      try {
        const v = await requestJson<Verified>('/v1/auth/email/verify', {
          method: 'POST',
          json: { email: emailInput.value, code: codeInput.value.trim() },
          anonymous: true,
        })
        saveSession({ ...toSession(v), user: v.user, workspace: v.workspace })
        codeForm.hidden = true
        codeForm.reset()
        hint.hidden = true
      } catch (err) {
        showError(error, describeError(err))
        codeInput.select()
      }
    })
  })
}

async function showOutboxHint(hint: HTMLElement, email: string): Promise<void> {
  const path = `/v1/dev/outbox?to=${encodeURIComponent(email)}`
  const res = await fetch(path).catch(() => null)
  if (!res?.ok) return
  const link = hint.querySelector('a')!
  link.href = path
  hint.hidden = false
}

/** The sign-in markup, made once here rather than copied into each page's HTML. */
function signInForms(): HTMLElement[] {
  const emailInput = h('input', { id: 'sign-in-email', type: 'email', autocomplete: 'email', required: true })
  const codeInput = h('input', {
    id: 'sign-in-code',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    pattern: '\\d{6}',
    maxlength: '6',
    required: true,
  })
  const outbox = h('a', { href: '/v1/dev/outbox', target: '_blank', rel: 'noopener' }, 'development outbox')
  return [
    h(
      'form',
      { id: 'sign-in-email-form', class: 'inline' },
      h('label', {}, 'Email ', emailInput),
      h('button', { type: 'submit' }, 'Email me a code'),
    ),
    h(
      'form',
      { id: 'sign-in-code-form', class: 'inline', hidden: true },
      h('p', {}, 'We sent a code to ', h('strong', { id: 'sign-in-sent-to' }), '.'),
      h('label', {}, 'Code ', codeInput),
      h('button', { type: 'submit' }, 'Sign in'),
    ),
    h(
      'p',
      { id: 'sign-in-hint', class: 'hint', hidden: true },
      'Local mode: no email is sent; the code is in the ',
      outbox,
      '.',
    ),
    h('p', { id: 'sign-in-error', class: 'error', role: 'alert', hidden: true }),
  ]
}
