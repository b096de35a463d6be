/**
 * @module
 * Credentials: an API key, or a session (access + refresh token) kept in a `SessionStore` the
 * caller owns (a file for the CLI, memory or storage in a browser). Access tokens live an hour;
 * the SDK refreshes one shortly before it expires, or once after a 401, and saves the new pair.
 * Refresh tokens are single use: concurrent requests share the refresh in flight, and a store
 * shared by several clients (a browser's tabs) may make renewals exclusive among them. A session
 * the API will not renew has ended: the store is told to forget it. Refreshes
 * that still race (two processes sharing a session file) get the same pair from the API, which
 * answers a token rotated moments ago with its successor; a token replayed later ends the session.
 */
import { CutoutProblem } from './problem.js'

export interface SessionTokens {
  accessToken: string
  refreshToken: string
  /** When the access token expires (ms since the epoch). */
  expiresAt: number
}

/** Where a session lives between calls and runs. Either method may be async. */
export interface SessionStore {
  load(): SessionTokens | undefined | Promise<SessionTokens | undefined>
  save(tokens: SessionTokens): void | Promise<void>
  /**
   * Runs `renew` while no other client of the same store renews (a Web Lock across a browser's
   * tabs). Optional: renewals in one client are one at a time anyway.
   */
  exclusive?<T>(renew: () => Promise<T>): Promise<T>
  /**
   * Forgets the session. Called when the API refuses to renew it (401: revoked, signed out
   * elsewhere, or its refresh token replayed), so the next call finds no session rather than
   * sending a dead one again. Optional: a store without it keeps what it holds.
   */
  clear?(): void | Promise<void>
}

/** The API's token pair (email verify, refresh, device token). */
export interface TokenPair {
  accessToken: string
  refreshToken: string
  expiresIn: number
}

/** Refresh this long before expiry, so a token does not lapse between check and use. */
const EARLY_REFRESH_MS = 60_000

export const toSession = (pair: TokenPair, now = Date.now()): SessionTokens => ({
  accessToken: pair.accessToken,
  refreshToken: pair.refreshToken,
  expiresAt: now + pair.expiresIn * 1000,
})

/** A store that keeps the session in memory (tests, short scripts, a browser tab). */
export function memorySession(initial?: SessionTokens): SessionStore {
  let tokens = initial
  return {
    load: () => tokens,
    save: (next) => {
      tokens = next
    },
  }
}

/** Supplies the bearer token for each request and renews sessions. */
export class Credentials {
  #refreshing?: Promise<string>

  constructor(
    private readonly source: { apiKey: string } | { session: SessionStore } | undefined,
    private readonly refresh: (refreshToken: string) => Promise<TokenPair>,
  ) {}

  get isSession(): boolean {
    return !!this.source && 'session' in this.source
  }

  /** The token to send now, refreshing a session that is about to expire. */
  async token(): Promise<string | undefined> {
    if (!this.source) return undefined
    if ('apiKey' in this.source) return this.source.apiKey
    const tokens = await this.source.session.load()
    if (!tokens) throw new CutoutProblem(401, { code: 'invalid_api_key', detail: 'Not signed in' })
    if (tokens.expiresAt - EARLY_REFRESH_MS > Date.now()) return tokens.accessToken
    return this.renew(tokens.accessToken)
  }

  /** Renews the session unless another call already did since `staleToken` was read. */
  async renew(staleToken: string): Promise<string> {
    if (!this.source || !('session' in this.source)) throw new Error('only sessions can be renewed')
    const store = this.source.session
    const renewal = async () => {
      // Read again: another call, tab or process may have renewed while this one waited.
      const current = await store.load()
      if (!current) throw new CutoutProblem(401, { code: 'invalid_api_key', detail: 'Not signed in' })
      if (current.accessToken !== staleToken && current.expiresAt - EARLY_REFRESH_MS > Date.now()) {
        return current.accessToken
      }
      const next = toSession(await this.#refreshOrEnd(store, current.refreshToken))
      await store.save(next)
      return next.accessToken
    }
    this.#refreshing ??= (store.exclusive ? store.exclusive(renewal) : renewal()).finally(() => {
      this.#refreshing = undefined
    })
    return this.#refreshing
  }

  /** The new pair; a 401 means the session has ended, and the store forgets it. */
  async #refreshOrEnd(store: SessionStore, refreshToken: string): Promise<TokenPair> {
    try {
      return await this.refresh(refreshToken)
    } catch (err) {
      if (err instanceof CutoutProblem && err.status === 401) await store.clear?.()
      throw err
    }
  }
}
