/**
 * @module
 * `requireAuth(...scopes)`: authenticates the bearer key and checks scopes (SPEC.md §5).
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { assertScopes, authenticateApiKey, type Scope } from '../services/auth'

export const requireAuth = (...scopes: Scope[]) =>
  createMiddleware<AppEnv>(async function requireAuth(c, next) {
    const header = c.req.header('authorization')
    const token = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim()
    const auth = await authenticateApiKey(c.env.DB, token)
    assertScopes(auth, scopes)
    c.set('auth', auth)
    await next()
  })
