/**
 * @module
 * What every command shares: where the session file lives, which API to talk to, how to
 * authenticate (CUTOUT_API_KEY wins over a stored session, which is used only for the API it was
 * signed in to), and how to print for people or for
 * scripts (`--json`: one JSON document on stdout, messages on stderr).
 */
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Cutout } from '@cutout/sdk'
import { fileSession, normalizeBaseUrl, readSessionFile, sessionIsFor, type StoredSession } from '@cutout/sdk/node'
import { CliError, EXIT } from './exit.js'

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787'

export interface GlobalOptions {
  json?: boolean
  baseUrl?: string
}

/** $XDG_CONFIG_HOME/cutout/session.json, else ~/.config/cutout/session.json. */
export function sessionPath(env = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config')
  return join(base, 'cutout', 'session.json')
}

/** --base-url, then CUTOUT_BASE_URL, then the stored session's API, then local mode; normalised. */
export async function resolveBaseUrl(options: GlobalOptions): Promise<string> {
  const stored = await readSessionFile(sessionPath())
  const url = options.baseUrl || process.env.CUTOUT_BASE_URL || stored?.baseUrl || DEFAULT_BASE_URL
  try {
    return normalizeBaseUrl(url)
  } catch {
    throw new CliError(EXIT.usage, `not an absolute URL: ${url} (expected e.g. ${DEFAULT_BASE_URL})`)
  }
}

/**
 * The stored session when it belongs to the API at `baseUrl`. A session for another API is never
 * used there (its tokens would go to another host): `otherApi` names where it belongs instead.
 */
export async function storedSessionFor(baseUrl: string): Promise<{ session?: StoredSession; otherApi?: string }> {
  const stored = await readSessionFile(sessionPath())
  if (!stored) return {}
  return sessionIsFor(stored, baseUrl) ? { session: stored } : { otherApi: stored.baseUrl }
}

/** "Not signed in" for `baseUrl`, saying where the stored session belongs when it is elsewhere. */
export function notSignedIn(baseUrl: string, otherApi?: string): string {
  return otherApi
    ? `Not signed in to ${baseUrl} (the stored session is for ${otherApi})`
    : `Not signed in to ${baseUrl}`
}

/** A client that may call without credentials (login). */
export async function anonymousClient(options: GlobalOptions): Promise<Cutout> {
  return new Cutout({ baseUrl: await resolveBaseUrl(options) })
}

/** A client with the API key from CUTOUT_API_KEY, or the stored session (refreshed as needed). */
export async function authedClient(options: GlobalOptions, log: (line: string) => void): Promise<Cutout> {
  const baseUrl = await resolveBaseUrl(options)
  const retry = {
    onRetry: ({ delayMs, status }: { delayMs: number; status?: number }) =>
      log(`retrying in ${Math.ceil(delayMs / 1000)} s${status ? ` (HTTP ${status})` : ''}`),
  }
  const apiKey = process.env.CUTOUT_API_KEY
  if (apiKey) return new Cutout({ baseUrl, apiKey, retry })
  const { session, otherApi } = await storedSessionFor(baseUrl)
  if (!session) {
    const login = otherApi ? `cutout login --base-url ${baseUrl}` : 'cutout login'
    throw new CliError(EXIT.auth, `${notSignedIn(baseUrl, otherApi)}: run \`${login}\`, or set CUTOUT_API_KEY`)
  }
  return new Cutout({ baseUrl, session: fileSession(sessionPath(), baseUrl), retry })
}

/** Prints for people (text) or scripts (--json). */
export class Output {
  constructor(readonly json: boolean) {}

  /** A message for the person at the terminal; stderr, so stdout stays clean for data. */
  info(line: string): void {
    process.stderr.write(`${line}\n`)
  }

  /** The command's result: `data` as JSON with --json, else the text. */
  result(data: unknown, text: string | (() => string)): void {
    if (this.json) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`)
    else process.stdout.write(`${typeof text === 'function' ? text() : text}\n`)
  }
}
