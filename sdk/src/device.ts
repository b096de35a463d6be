/**
 * @module
 * Device login (RFC 8628 as DESIGN.md §3 has it): ask for a code, show it, poll the token endpoint
 * every `interval` seconds. 428 `authorization_pending` means keep going; 429 means too fast
 * (slow_down): the interval grows by 5 s, or to `Retry-After` when that is longer. Any other
 * answer ends it (400 when the code expired or was used).
 */
import { type SessionTokens, toSession, type TokenPair } from './auth.js'
import type { Cutout, Schemas } from './client.js'
import { CutoutProblem, retryAfterSeconds } from './problem.js'
import { sleep } from './retry.js'

export type DeviceAuthorization = Schemas['DeviceAuthorization']

export interface DeviceLoginOptions {
  /** Shown to the person approving (e.g. `cutout-cli on ada-laptop`). */
  client: string
  /** Show the code and URL to the person. */
  onCode: (authorization: DeviceAuthorization) => void
  signal?: AbortSignal
}

export async function deviceLogin(cutout: Cutout, options: DeviceLoginOptions): Promise<SessionTokens> {
  const created = await cutout.sendOnce('/v1/device-authorizations', {
    method: 'POST',
    json: { client: options.client },
    signal: options.signal,
  })
  if (created.status !== 201) throw await CutoutProblem.fromResponse(created)
  const authorization = (await created.json()) as DeviceAuthorization
  options.onCode(authorization)
  let interval = authorization.interval
  const expiresAt = Date.now() + authorization.expiresIn * 1000
  while (Date.now() < expiresAt) {
    await sleep(interval * 1000, options.signal)
    const res = await cutout.sendOnce('/v1/device-authorizations/token', {
      method: 'POST',
      json: { deviceCode: authorization.deviceCode },
      signal: options.signal,
    })
    if (res.status === 200) return toSession((await res.json()) as TokenPair)
    if (res.status === 429) interval = Math.max(interval + 5, retryAfterSeconds(res.headers) ?? 0)
    else if (res.status !== 428) throw await CutoutProblem.fromResponse(res)
    await res.body?.cancel().catch(() => undefined)
  }
  throw new CutoutProblem(400, { code: 'invalid_input', field: 'deviceCode', detail: 'The device code expired' })
}
