/**
 * @module
 * A `SessionStore` for a browser tab (`sessionStorage`, or `localStorage` to share one session
 * across tabs), which keeps a tab's copies of the session in step with its other tabs.
 *
 * Tabs race for a refresh: a duplicated tab (or one opened by `window.open`) starts with a copy of
 * the session, and each copy's refresh token is single use. So renewals take a Web Lock shared by
 * the origin's tabs (one refresh at a time; a tab that waited finds the pair the other saved), and
 * each saved pair is broadcast on a `BroadcastChannel` to the tabs holding the token it replaced,
 * which adopt it; a sign-out is broadcast the same way. A tab that misses both (frozen in the
 * background, or a browser without them) still stays signed in when it refreshes soon after, within
 * the API's reuse window (`POST /v1/auth/refresh`); a copy that wakes hours later has been replaced.
 */
import type { SessionStore, SessionTokens } from './auth.js'

/** What goes between tabs: the pair that replaced `previous`, or `null` once signed out. */
interface Rotation<T> {
  previous: string
  next: T | null
}

/** The part of the Web Storage API used here (`sessionStorage`, `localStorage`, or a test's map). */
export interface StorageArea {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/** The part of the Web Locks API used here (typed here: the SDK also compiles without the DOM's types). */
interface Locks {
  request<R>(name: string, callback: () => Promise<R>): Promise<R>
}

export interface StorageSessionOptions<T extends SessionTokens> {
  /** Told whenever this tab's session changes: a refresh here or in another tab, a sign-out. */
  onChange?: (session: T | null) => void
}

/** A session in `storage` under `key`, with whatever else the caller stores beside the tokens. */
export interface StorageSession<T extends SessionTokens> extends SessionStore {
  load(): T | undefined
  save(tokens: SessionTokens): void
  /** Stores a new session (a sign-in) without telling other tabs: their sessions are their own. */
  start(session: T): void
  /** Forgets the session here and in the tabs that hold a copy of it. */
  clear(): void
}

export function storageSession<T extends SessionTokens>(
  storage: StorageArea,
  key: string,
  options: StorageSessionOptions<T> = {},
): StorageSession<T> {
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(`cutout-session:${key}`) : undefined
  // In Node (tests, server-side rendering) an open channel would keep the process alive.
  ;(channel as { unref?: () => void } | undefined)?.unref?.()
  const locks = (globalThis as { navigator?: { locks?: Locks } }).navigator?.locks

  const load = (): T | undefined => {
    try {
      const raw = storage.getItem(key)
      return raw ? (JSON.parse(raw) as T) : undefined
    } catch {
      return undefined
    }
  }
  const write = (session: T | null) => {
    if (session) storage.setItem(key, JSON.stringify(session))
    else storage.removeItem(key)
    options.onChange?.(session)
  }
  const broadcast = (rotation: Rotation<T>) => channel?.postMessage(rotation)

  channel?.addEventListener('message', (event) => {
    const { previous, next } = (event as MessageEvent).data as Rotation<T>
    if (load()?.refreshToken === previous) write(next)
  })

  return {
    load,
    save(tokens) {
      const current = load()
      const next = { ...current, ...tokens } as T
      write(next)
      if (current && current.refreshToken !== tokens.refreshToken) {
        broadcast({ previous: current.refreshToken, next })
      }
    },
    start: (session) => write(session),
    clear() {
      const current = load()
      write(null)
      if (current) broadcast({ previous: current.refreshToken, next: null })
    },
    exclusive: locks ? (renew) => locks.request(`cutout-session:${key}`, renew) : undefined,
  }
}
