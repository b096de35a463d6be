/**
 * @module
 * Node-only helpers (`@cutout/sdk/node`): read a file as an upload input, and keep a session in a
 * JSON file readable only by its owner (0600), e.g. the CLI's ~/.config/cutout/session.json.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import type { SessionStore, SessionTokens } from './auth.js'
import { sniffImageType } from './image.js'

/** A file as a `File` with its detected media type (the API checks the bytes again). */
export async function readImageFile(path: string): Promise<File> {
  const bytes = await readFile(path)
  const type = await sniffImageType(new Blob([bytes]))
  return new File([bytes], basename(path), { type: type === 'application/octet-stream' ? '' : type })
}

/** What the session file holds: the tokens and the API they belong to. */
export interface StoredSession extends SessionTokens {
  baseUrl: string
}

export async function readSessionFile(path: string): Promise<StoredSession | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as StoredSession
  } catch {
    return undefined
  }
}

/** Written to a temporary file first and renamed, so a crash never leaves half a session. */
export async function writeSessionFile(path: string, session: StoredSession): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 })
  await chmod(temporary, 0o600) // the umask may have narrowed it, never widened; be explicit anyway
  await rename(temporary, path)
}

export async function removeSessionFile(path: string): Promise<void> {
  await rm(path, { force: true })
}

/**
 * An API base URL in one spelling, so two spellings of the same API compare equal: scheme and host
 * in lower case, the scheme's default port dropped, no trailing slash. Throws a TypeError when
 * `url` is not an absolute URL.
 */
export function normalizeBaseUrl(url: string): string {
  const parsed = new URL(url)
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`
}

/** Whether a stored session belongs to the API at `baseUrl` (its tokens may be sent there). */
export function sessionIsFor(session: StoredSession, baseUrl: string): boolean {
  try {
    return normalizeBaseUrl(session.baseUrl) === normalizeBaseUrl(baseUrl)
  } catch {
    return false
  }
}

/**
 * A `SessionStore` over a session file for `baseUrl`. A session the file holds for another API is
 * never handed out (its tokens must not go to another host): the store then acts as signed out.
 */
export function fileSession(path: string, baseUrl: string): SessionStore {
  return {
    load: async () => {
      const stored = await readSessionFile(path)
      return stored && sessionIsFor(stored, baseUrl) ? stored : undefined
    },
    save: (tokens) => writeSessionFile(path, { ...tokens, baseUrl }),
  }
}
