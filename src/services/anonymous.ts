/**
 * @module
 * Anonymous use (SPEC.md §5.4, DESIGN.md §3): 7 removals per UTC day, counted per device and per
 * client IP (both must have one left), with results capped at 0.25 MP.
 */
import { loadConfig } from '../config'
import type { Env } from '../env'
import { ApiError } from '../errors'
import { nextUtcMidnight } from '../lib/window'
import type { AuthContext } from './auth'

/** Anonymous results are previews: at most a quarter megapixel, like remove.bg's free tier. */
export const ANONYMOUS_MAX_PIXELS = 250_000
const dailyRemovals = (env: Env) => loadConfig(env).anonymousDailyRemovals

function clients(env: Env, auth: AuthContext) {
  return [`device:${auth.deviceId}`, `ip:${auth.clientIp}`].map((name) =>
    env.ANONYMOUS_CLIENT.get(env.ANONYMOUS_CLIENT.idFromName(name)),
  )
}

/**
 * Takes one removal from today's allowance of the device and of the address; 429 when either has
 * none left. Returns how to give both back if the request is refused later.
 */
export async function takeAllowance(env: Env, auth: AuthContext): Promise<() => Promise<void>> {
  const limit = dailyRemovals(env)
  const [device, ip] = clients(env, auth)
  const byDevice = await device.take(limit)
  if (!byDevice.allowed) throw allowanceSpent(limit, byDevice.reset)
  const byIp = await ip.take(limit)
  if (!byIp.allowed) {
    await device.refund()
    throw allowanceSpent(limit, byIp.reset)
  }
  return async () => {
    await Promise.all([device.refund(), ip.refund()])
  }
}

function allowanceSpent(limit: number, reset: number): ApiError {
  return new ApiError(
    'rate_limit_exceeded',
    `Anonymous use allows ${limit} removals per UTC day; sign in for more, or retry after the reset`,
    { retryAfter: reset },
  )
}

export async function anonymousUsage(env: Env, auth: AuthContext) {
  const limit = dailyRemovals(env)
  const [device, ip] = await Promise.all(clients(env, auth).map((c) => c.allowance(limit)))
  return {
    kind: 'anonymous' as const,
    limit,
    remaining: Math.min(device.remaining, ip.remaining),
    periodEndsAt: new Date(nextUtcMidnight()).toISOString(),
  }
}
