/**
 * @module
 * `requireAuth(...scopes)`: authenticates the bearer credential and checks scopes (SPEC.md §5).
 * The credential is either an API key (`sk_live_…`) or a session access token (a JWT from email
 * sign-in, refresh or the device flow). `requireSession(...scopes)` accepts only the latter.
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { API_KEY_PREFIX, assertScopes, authenticateApiKey, type AuthContext, type Scope } from '../services/auth'
import { verifyAccessToken } from '../services/sessions'

/** The token of `Authorization: Bearer <token>`, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  return header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim() || undefined
}

/** `executionCtx.waitUntil` when the request has one (Hono's getter throws when it has not). */
function waitUntilOf(c: Context<AppEnv>): ((p: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx
    return (p) => ctx.waitUntil(p)
  } catch {
    return undefined
  }
}

/** Resolves the request's credential to an `AuthContext`, or throws 401 `invalid_api_key`. */
export async function authenticate(c: Context<AppEnv>): Promise<AuthContext> {
  const token = bearerToken(c.req.header('authorization'))
  if (token && !token.startsWith(API_KEY_PREFIX) && token.split('.').length === 3) {
    return verifyAccessToken(c.env, token)
  }
  if (!token) {
    throw new ApiError(
      'invalid_api_key',
      'Expected Authorization: Bearer with an API key (sk_live_…) or a session access token',
    )
  }
  return authenticateApiKey(c.env.DB, token, { waitUntil: waitUntilOf(c) })
}

/**
 * @example
 * createRoute({ …, middleware: [requireAuth('images:write')] as const })
 */
export const requireAuth = (...scopes: Scope[]) =>
  createMiddleware<AppEnv>(async function requireAuth(c, next) {
    const auth = await authenticate(c)
    assertScopes(auth, scopes)
    c.set('auth', auth)
    await next()
  })

/**
 * Like `requireAuth`, but only a signed-in session will do: an API key gets 403
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
