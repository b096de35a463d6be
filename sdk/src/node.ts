/**
 * @module
 * Node-only helpers (`@cutout/sdk/node`): read a file as an upload input, and keep a session in a
 * JSON file readable only by its owner (0600), e.g. the CLI's ~/.config/cutout/session.json.
 */
import { chmod, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import type { SessionStore, SessionTokens } from './auth.js'
import { checkImageHead } from './image.js'
import { SNIFF_BYTES, sniffImage } from './image-sniff.js'

/**
 * A file as a `File` with its detected media type (the API checks the bytes again). A file the
 * API is sure to refuse (`checkImage`: too large, not a supported image, dimensions out of
 * bounds) is refused first, in the API's words, from its size and first bytes: the rest of it is
 * never read, so nothing of it can be uploaded.
 * @param options.field the name the caller knows the file by, given as a refusal's `field`
 * @throws {CutoutProblem} the API's refusal; the file system's error when the file cannot be read
 */
export async function readImageFile(path: string, options: { field?: string } = {}): Promise<File> {
  const file = await open(path)
  try {
    const { size } = await file.stat()
    // A positional read: the file's own position stays at 0 for readFile below.
    const start = new Uint8Array(Math.min(size, SNIFF_BYTES))
    const { bytesRead } = await file.read(start, 0, start.length, 0)
    const head = start.subarray(0, bytesRead)
    checkImageHead(size, head, options.field)
    const bytes = await file.readFile()
    return new File([bytes], basename(path), { type: sniffImage(head)?.mimeType ?? '' })
  } finally {
    await file.close()
  }
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
