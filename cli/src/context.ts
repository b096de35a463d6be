/**
 * @module
 * What every command shares: where the session file lives, which API to talk to, how to
 * authenticate (CUTOUT_API_KEY wins over a stored session), and how to print for people or for
 * scripts (`--json`: one JSON document on stdout, messages on stderr).
 */
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Cutout } from '@cutout/sdk'
import { fileSession, readSessionFile } from '@cutout/sdk/node'
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

/** --base-url, then CUTOUT_BASE_URL, then the stored session's API, then local mode. */
export async function resolveBaseUrl(options: GlobalOptions): Promise<string> {
  const stored = await readSessionFile(sessionPath())
  return options.baseUrl || process.env.CUTOUT_BASE_URL || stored?.baseUrl || DEFAULT_BASE_URL
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
  const path = sessionPath()
  if (!(await readSessionFile(path))) {
    throw new CliError(EXIT.auth, 'Not signed in: run `cutout login`, or set CUTOUT_API_KEY')
  }
  return new Cutout({ baseUrl, session: fileSession(path, baseUrl), retry })
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
