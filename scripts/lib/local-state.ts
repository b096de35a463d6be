/**
 * Local-mode state for `npm start` (all of it gitignored):
 * - `.wrangler/dev-secrets.json`: the signing and encryption keys (inference, result, session,
 *   device, data),
 *   generated once.
 * - `.dev.vars`: what the Worker reads in `wrangler dev` — those secrets plus
 *   ENVIRONMENT=development and SSRF_ALLOWLIST=127.0.0.1,localhost. Lines a developer adds are kept.
 * - `<persist dir>/dev-api-key.json`: the seeded workspace and the plaintext development API key,
 *   kept beside the local D1 database it belongs to so every run prints the same key.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { nextPeriodEnd } from '../../src/lib/window.js'
import type { Statement } from './local-d1'

export interface DevSecrets {
  INFERENCE_SIGNING_KEY: string
  RESULT_SIGNING_KEY: string
  SESSION_SIGNING_KEY: string
  DEVICE_SIGNING_KEY: string
  /** base64url of 32 bytes: AES-GCM key for webhook secrets at rest. */
  DATA_ENCRYPTION_KEY: string
}

export interface DevKeyState {
  workspaceId: string
  keyId: string
  apiKey: string
}

/** Same format as src/services/auth.ts (`sk_live_` + 32 random bytes base64url; prefix = 12 chars). */
export const API_KEY_PREFIX = 'sk_live_'
export const KEY_PREFIX_LENGTH = 12
export const ALL_SCOPES = ['images:write', 'jobs:read', 'webhooks:write', 'keys:write', 'tryon:write']
export const DEV_WORKSPACE_NAME = 'Development'
export const DEV_CREDIT_LIMIT = 1000

function readJson<T>(path: string): T | undefined {
  if (!existsSync(path)) return undefined
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T
  } catch {
    return undefined
  }
}

function writePrivate(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text, { mode: 0o600 })
}

/** Reads the signing keys, generating (and saving) any that are missing. */
export function loadOrCreateSecrets(path: string): DevSecrets {
  const existing = readJson<Partial<DevSecrets>>(path) ?? {}
  const secrets: DevSecrets = {
    INFERENCE_SIGNING_KEY: existing.INFERENCE_SIGNING_KEY || randomBytes(32).toString('base64url'),
    RESULT_SIGNING_KEY: existing.RESULT_SIGNING_KEY || randomBytes(32).toString('base64url'),
    SESSION_SIGNING_KEY: existing.SESSION_SIGNING_KEY || randomBytes(32).toString('base64url'),
    DEVICE_SIGNING_KEY: existing.DEVICE_SIGNING_KEY || randomBytes(32).toString('base64url'),
    DATA_ENCRYPTION_KEY: existing.DATA_ENCRYPTION_KEY || randomBytes(32).toString('base64url'),
  }
  if ((Object.keys(secrets) as (keyof DevSecrets)[]).some((name) => secrets[name] !== existing[name])) {
    writePrivate(path, `${JSON.stringify(secrets, null, 2)}\n`)
  }
  return secrets
}

const quote = (value: string) => JSON.stringify(value)

/**
 * Writes `.dev.vars`: the secrets always match `.wrangler/dev-secrets.json`; ENVIRONMENT and
 * SSRF_ALLOWLIST get local defaults only when absent; any other line is kept as it was.
 */
export function writeDevVars(path: string, secrets: DevSecrets): void {
  const forced: Record<string, string> = { ...secrets }
  const defaults: Record<string, string> = { ENVIRONMENT: 'development', SSRF_ALLOWLIST: '127.0.0.1,localhost' }
  const lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n') : []
  const seen = new Set<string>()
  const out: string[] = []
  for (const line of lines) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)
    if (m && m[1] in forced) {
      if (!seen.has(m[1])) out.push(`${m[1]}=${quote(forced[m[1]])}`)
      seen.add(m[1])
    } else {
      if (m) seen.add(m[1])
      out.push(line)
    }
  }
  while (out.length && out[out.length - 1].trim() === '') out.pop()
  if (!out.length) out.push('# Written by `npm start` (scripts/start.ts) for `wrangler dev`. Local development only.')
  for (const [name, value] of Object.entries({ ...defaults, ...forced })) {
    if (!seen.has(name)) out.push(`${name}=${quote(value)}`)
  }
  const text = `${out.join('\n')}\n`
  if (!existsSync(path) || readFileSync(path, 'utf8') !== text) writePrivate(path, text)
}

export function readKeyState(path: string): DevKeyState | undefined {
  const s = readJson<DevKeyState>(path)
  return s?.workspaceId && s.keyId && s.apiKey?.startsWith(API_KEY_PREFIX) ? s : undefined
}

export function writeKeyState(path: string, state: DevKeyState): void {
  writePrivate(path, `${JSON.stringify(state, null, 2)}\n`)
}

export function mintKeyState(workspaceId: string = randomUUID()): DevKeyState {
  return { workspaceId, keyId: randomUUID(), apiKey: API_KEY_PREFIX + randomBytes(32).toString('base64url') }
}

/**
 * Idempotent seed: the workspace, its credit account and the key (by hash), each `INSERT OR IGNORE`,
 * so re-running against a seeded database changes nothing and a wiped one is seeded again.
 */
export function seedStatements(state: DevKeyState, now = new Date()): Statement[] {
  const hash = createHash('sha256').update(state.apiKey).digest('hex')
  return [
    {
      sql: 'INSERT OR IGNORE INTO workspaces (id, name) VALUES (?, ?)',
      params: [state.workspaceId, DEV_WORKSPACE_NAME],
    },
    {
      sql: 'INSERT OR IGNORE INTO credit_accounts (workspace_id, credit_limit, period_ends_at) VALUES (?, ?, ?)',
      params: [state.workspaceId, DEV_CREDIT_LIMIT, nextPeriodEnd(now)],
    },
    {
      sql: 'INSERT OR IGNORE INTO api_keys (id, workspace_id, name, prefix, hash, scopes) VALUES (?, ?, ?, ?, ?, ?)',
      params: [
        state.keyId,
        state.workspaceId,
        'Development key (npm start)',
        state.apiKey.slice(0, KEY_PREFIX_LENGTH),
        hash,
        JSON.stringify(ALL_SCOPES),
      ],
    },
  ]
}
