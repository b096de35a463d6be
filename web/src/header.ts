/**
 * The site header's behaviour (its markup is scripts/lib/site-header.ts, the same on every page):
 * the account corner shows who is signed in, with Sign out, or a Sign in link; the links for
 * signed-in visitors show only to them. Every page with a script calls this once.
 */
import { cutout } from './api'
import { byId } from './dom'
import { clearSession, loadSession, onSession } from './session'

export function setUpHeader(): void {
  const signedIn = byId('signed-in')
  const signedOut = byId('signed-out')
  onSession((session) => {
    signedOut.hidden = Boolean(session)
    signedIn.hidden = !session
    byId('signed-in-as').textContent = session ? `${session.user.email} · ${session.workspace.name}` : ''
    for (const link of document.querySelectorAll<HTMLElement>('header [data-signed-in]')) link.hidden = !session
  })
  byId<HTMLButtonElement>('sign-out').addEventListener('click', signOut)
}

function signOut(): void {
  const session = loadSession()
  clearSession()
  // Revoke server-side too; the page has already forgotten the tokens whatever the answer.
  if (session)
    void cutout()
      .signOut(session.refreshToken)
      .catch(() => undefined)
}
