/**
 * @module
 * Request-rate limits (DESIGN.md §3): per workspace (120/min by default, or the workspace's own),
 * and per device and per client IP for callers without a credential (30/min), counted in fixed
 * windows of a minute (`RATE_LIMIT_WINDOW_SECONDS` shortens them for tests). Every response
 * carries `RateLimit-Policy` and `RateLimit` (IETF draft syntax); past the limit the answer is 429
 * `rate_limit_exceeded` with `Retry-After`. The service documents are outside these rules (SPEC.md
 * §4 exempts the health and contract documents from part 7): a load balancer probing
 * `/health/ready` every second from one address must never read 429 as "down".
 */
import type { Context } from 'hono'
import { getCookie } from 'hono/cookie'
import { createMiddleware } from 'hono/factory'
import { type Config, loadConfig } from '../config'
import type { AppEnv } from '../env'
import { ApiError, problemResponse } from '../errors'
import type { WindowResult } from '../lib/window'
import { DEVICE_COOKIE, readDevice } from '../services/device'
import { authenticate, clientIp } from './auth'

/** The service documents (SPEC.md §4): neither counted nor answered with RateLimit headers. */
export const UNLIMITED_PATHS: ReadonlySet<string> = new Set(['/health/live', '/health/ready', '/openapi.json'])

/** "per minute", or the window's length when a test shortened it. */
const per = (seconds: number) => (seconds === 60 ? 'per minute' : `per ${seconds} s`)

/**
 * The caller's window: its workspace when it presents a valid credential, else device and IP.
 * `config` is read once per request (the window a minute unless `RATE_LIMIT_WINDOW_SECONDS` says otherwise).
 */
async function hitWindow(c: Context<AppEnv>, config: Config): Promise<WindowResult> {
  const env = c.env
  const seconds = config.rateWindowSeconds
  if (c.req.header('authorization')) {
    // A bad credential is refused by the route with 401; it is counted against the address here.
    const auth = await authenticate(c).catch(() => null)
    if (auth) {
      const stub = env.WORKSPACE.get(env.WORKSPACE.idFromName(auth.workspaceId))
      return stub.hit(auth.workspaceId, config.workspaceRequestsPerWindow, seconds)
    }
  }
  const limit = config.anonymousRequestsPerWindow
  const subjects = [`ip:${clientIp(c)}`]
  const cookie = getCookie(c, DEVICE_COOKIE)
  if (cookie) {
    const device = await readDevice(cookie, env.DEVICE_SIGNING_KEY)
    if (!device.fresh) subjects.push(`device:${device.id}`)
  }
  const results = await Promise.all(
    subjects.map((s) => env.ANONYMOUS_CLIENT.get(env.ANONYMOUS_CLIENT.idFromName(s)).hit(limit, seconds)),
  )
  return results.reduce((a, b) => ({
    allowed: a.allowed && b.allowed,
    limit,
    remaining: Math.min(a.remaining, b.remaining),
    reset: Math.max(a.reset, b.reset),
  }))
}

function setHeaders(headers: Headers, r: WindowResult, seconds: number) {
  headers.set('RateLimit-Policy', `"default";q=${r.limit};w=${seconds}`)
  headers.set('RateLimit', `"default";r=${r.remaining};t=${r.reset}`)
}

export const rateLimit = () =>
  createMiddleware<AppEnv>(async function rateLimit(c, next) {
    if (UNLIMITED_PATHS.has(c.req.path)) return next()
    const config = loadConfig(c.env)
    const seconds = config.rateWindowSeconds
    const result = await hitWindow(c, config)
    if (!result.allowed) {
      const res = problemResponse(
        c,
        new ApiError(
          'rate_limit_exceeded',
          `Expected at most ${result.limit} requests ${per(seconds)}; retry after ${result.reset} s`,
          {
            retryAfter: result.reset,
          },
        ),
      )
      setHeaders(res.headers, result, seconds)
      return res
    }
    await next()
    setHeaders(c.res.headers, result, seconds)
  })
