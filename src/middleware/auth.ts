/**
 * @module
 * `authorize(route)`: authenticates the bearer credential and checks the route's scopes (SPEC.md §5).
 * The credential is either an API key (`sk_live_…`) or a session access token (a JWT from email
 * sign-in, refresh or the device flow). `requireSession(...scopes)` accepts only the latter.
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import {
  API_KEY_PREFIX,
  assertScopes,
  authenticateApiKey,
  type AuthContext,
  MISSING_CREDENTIAL,
  type Scope,
} from '../services/auth'
import { verifyAccessToken } from '../services/sessions'
import { ROUTE_ACCESS, type RouteAccess, type RouteKey } from '../services/access'
import { DEVICE_COOKIE, deviceCookie, deviceWorkspaceId, readDevice } from '../services/device'
import { getCookie } from 'hono/cookie'
import { verifyResultSignature } from '../services/result-url'
import { bearerToken } from '../lib/bearer'
import { clientAddress } from '../lib/client-address'

export { bearerToken }

/** `executionCtx.waitUntil` when the request has one (Hono's getter throws when it has not). */
function waitUntilOf(c: Context<AppEnv>): ((p: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx
    return (p) => ctx.waitUntil(p)
  } catch {
    return undefined
  }
}

/**
 * Resolves the request's credential to an `AuthContext`, or throws 401 `invalid_api_key`.
 * The result is kept on the context, so the rate limiter and the route authenticate once.
 */
export async function authenticate(c: Context<AppEnv>): Promise<AuthContext> {
  const known = c.get('auth')
  if (known && known.kind !== 'anonymous') return known
  const auth = await resolveCredential(c)
  c.set('auth', auth)
  return auth
}

async function resolveCredential(c: Context<AppEnv>): Promise<AuthContext> {
  const token = bearerToken(c.req.header('authorization'))
  if (token && !token.startsWith(API_KEY_PREFIX) && token.split('.').length === 3) {
    return verifyAccessToken(c.env, token)
  }
  if (!token) {
    throw new ApiError('invalid_api_key', MISSING_CREDENTIAL)
  }
  return authenticateApiKey(c.env.DB, token, { waitUntil: waitUntilOf(c) })
}

/** The client address the platform reports (`src/lib/client-address.ts`); never one the client chose. */
export const clientIp = (c: Context<AppEnv>) => clientAddress(c.env, c.req.raw.headers)

/**
 * Authorizes a route by its entry in the access table (`src/services/access.ts`): a credential
 * with the route's scopes, or, where the route allows it and no credential is sent, the caller's
 * anonymous device (minting the `__Host-device` cookie when it has none or a forged one).
 *
 * @example
 * createRoute({ …, middleware: [authorize('POST /v1/removals')] as const })
 */
export const authorize = (route: RouteKey) => {
  const access: RouteAccess = ROUTE_ACCESS[route]
  return createMiddleware<AppEnv>(async function authorize(c, next) {
    if (access.anonymous && !c.req.header('authorization')) {
      const device = await readDevice(getCookie(c, DEVICE_COOKIE), c.env.DEVICE_SIGNING_KEY)
      c.set('auth', {
        kind: 'anonymous',
        workspaceId: deviceWorkspaceId(device.id),
        keyId: '',
        scopes: [],
        deviceId: device.id,
        clientIp: clientIp(c),
      })
      await next()
      if (device.fresh) c.res.headers.append('set-cookie', await deviceCookie(device.id, c.env.DEVICE_SIGNING_KEY))
      return
    }
    const auth = await authenticate(c)
    assertScopes(auth, access.scopes)
    await next()
  })
}

/**
 * Authenticates like `authorize`, but only a signed-in session will do: an API key gets 403
 * `insufficient_scope` (it is a valid credential, just not one that may act for a person).
 */
export const requireSession = (...scopes: Scope[]) =>
  createMiddleware<AppEnv>(async function requireSession(c, next) {
    const auth = await authenticate(c)
    if (auth.kind !== 'session') {
      throw new ApiError('insufficient_scope', 'This needs a signed-in session; API keys cannot do it')
    }
    assertScopes(auth, scopes)
    c.set('auth', auth)
    await next()
  })

/**
 * A result's route: a signed `result.url` (`?exp=…&sig=…`, DESIGN.md §3 Result URL) needs no
 * credential; the bare path is authorized like `route`. With a signature, any Authorization header
 * is ignored: the signature alone decides, so the same URL answers the same whoever follows it (a
 * browser or SDK that always sends its own key, of whatever workspace). A bad signature is 401
 * whatever credential comes with it.
 */
export const resultAccess = (route: RouteKey) =>
  createMiddleware<AppEnv>(async function resultAccess(c, next) {
    const { exp, sig } = c.req.query()
    if (exp === undefined && sig === undefined) return authorize(route)(c, next)
    if (!exp || !sig || !(await verifyResultSignature(c.env.RESULT_SIGNING_KEY, c.req.path, exp, sig))) {
      throw new ApiError(
        'invalid_api_key',
        'The result URL signature is invalid or has expired; read it again for a fresh one',
      )
    }
    c.set('resultSigned', true)
    await next()
  })

/**
 * The workspace a result read is confined to: the caller's, or null when a signature authorized
 * it. The rate limiter may have authenticated a credential sent along with a signed URL; the
 * signature over the path is the grant, so that credential's workspace must not narrow it.
 */
export const resultWorkspace = (c: Context<AppEnv>): string | null =>
  c.var.resultSigned ? null : (c.var.auth?.workspaceId ?? null)
