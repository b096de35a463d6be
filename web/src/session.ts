/**
 * The signed-in session (DESIGN.md §3 Sessions): kept in sessionStorage so it survives a reload
 * of this tab but not the browser, and never in a URL or cookie the page controls.
 */
export interface Session {
  accessToken: string
  refreshToken: string
  /** Epoch ms when the access token lapses. */
  expiresAt: number
  user: { id: string; email: string }
  workspace: { id: string; name: string }
}

const KEY = 'cutout.session'
const listeners = new Set<(s: Session | null) => void>()

export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(KEY)
    return raw ? (JSON.parse(raw) as Session) : null
  } catch {
    return null
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session))
  for (const listener of listeners) listener(session)
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY)
  for (const listener of listeners) listener(null)
}

/** Calls `listener` now and whenever the session changes (sign-in, refresh, sign-out). */
export function onSession(listener: (s: Session | null) => void): void {
  listeners.add(listener)
  listener(loadSession())
}
