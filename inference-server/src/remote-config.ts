/**
 * The settings of a remote GPU backend (the catalog generator's, the try-on model's), read from
 * `<PREFIX>_REMOTE_URL`, `_TOKEN`, `_TIMEOUT_MS` and `_MODEL`; a bad value stops the start.
 */

export const DEFAULT_REMOTE_TIMEOUT_MS = 120_000

export interface RemoteSettings {
  url: string
  token?: string
  timeoutMs: number
  model: string
}

export function remoteSettingsFromEnv(env: Record<string, string | undefined>, prefix: string): RemoteSettings {
  const url = env[`${prefix}_REMOTE_URL`] ?? ''
  if (!/^https?:\/\//.test(url) || !URL.canParse(url)) {
    throw new Error(
      `Expected an http(s) URL in ${prefix}_REMOTE_URL for ${prefix}_BACKEND=remote but received "${url}"`,
    )
  }
  const rawTimeout = env[`${prefix}_REMOTE_TIMEOUT_MS`]
  const timeoutMs = rawTimeout ? Number(rawTimeout) : DEFAULT_REMOTE_TIMEOUT_MS
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1000) {
    throw new Error(`Expected an integer of at least 1000 for ${prefix}_REMOTE_TIMEOUT_MS but received ${rawTimeout}`)
  }
  return {
    url,
    token: env[`${prefix}_REMOTE_TOKEN`] || undefined,
    timeoutMs,
    model: env[`${prefix}_REMOTE_MODEL`] || 'remote',
  }
}
