/**
 * The signed-in session (DESIGN.md §3 Sessions): kept in sessionStorage so it survives a reload
 * of this tab but not the browser, and never in a URL or cookie the page controls. The store is
 * the SDK's `storageSession`, so a duplicated tab that holds a copy follows this tab's refreshes
 * and sign-out instead of replaying a used refresh token (which would end the session).
 */
import type { SessionTokens } from '../../sdk/src/auth'
import { storageSession } from '../../sdk/src/browser-session'
import type { components } from '../../sdk/src/schema'

type Schemas = components['schemas']

/** The tokens (the SDK's `SessionTokens`) and who they act for, as sign-in answered (`Session`). */
export type Session = SessionTokens & Pick<Schemas['Session'], 'user' | 'workspace'>

const listeners = new Set<(s: Session | null) => void>()

/** The SDK's store for this tab's session (the page's requests renew through it: web/src/api.ts). */
export const sessionStore = storageSession<Session>(sessionStorage, 'cutout.session', {
  onChange: (session) => {
    for (const listener of listeners) listener(session)
  },
})

export function loadSession(): Session | null {
  return sessionStore.load() ?? null
}

/** A new session from sign-in: this tab's own, other tabs keep theirs. */
export function saveSession(session: Session): void {
  sessionStore.start(session)
}

/** Forgets the session in this tab and in the tabs that hold a copy of it. */
export function clearSession(): void {
  sessionStore.clear()
}

/** Calls `listener` now and whenever the session changes (sign-in, refresh, sign-out, another tab's). */
export function onSession(listener: (s: Session | null) => void): void {
  listeners.add(listener)
  listener(loadSession())
}
