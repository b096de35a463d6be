/**
 * @module
 * Email sign-in and sessions (SPEC.md §4 Email authentication, DESIGN.md §3):
 * POST /v1/auth/email/start, /v1/auth/email/verify, /v1/auth/refresh, /v1/auth/logout, and the
 * local-mode outbox GET /v1/dev/outbox (not part of the contract).
 */
import { createRoute } from '@hono/zod-openapi'
import { notFound, problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { authenticate, bearerToken } from '../middleware/auth'
import {
  EmailStartedSchema,
  EmailStartSchema,
  EmailVerifySchema,
  LogoutSchema,
  RefreshSchema,
  SessionSchema,
  TokenPairSchema,
} from '../schemas/auth'
import { json, noCredentials } from '../schemas/common'
import { unauthorized } from '../schemas/problems'
import { isLocalEnvironment, readDevOutbox } from '../services/email'
import { CODE_TTL_MS, MAX_CODE_ATTEMPTS, startEmailSignIn, verifyEmailSignIn } from '../services/email-sign-in'
import { logout as endSession, REFRESH_REUSE_WINDOW_MS, refreshSession } from '../services/sessions'

const tags = ['Sign-in']
/** Logout works with the session's access token or with only the refresh token in the body. */
const optionalBearer: Record<string, string[]>[] = [{ Bearer: [] }, {}]
const body = <T extends Parameters<typeof json>[0]>(schema: T, required = true) => ({
  required,
  content: { 'application/json': { schema } },
})

export const emailStart = createRoute({
  method: 'post',
  path: '/v1/auth/email/start',
  operationId: 'startEmailSignIn',
  summary: 'Email a six-digit sign-in code',
  description: `Needs no credential. The code works once, within ${CODE_TTL_MS / 60_000} minutes, and replaces any earlier code for the address. The answer is the same whether or not the address has an account; too many codes for one address in a short time is 429 \`rate_limit_exceeded\`.`,
  tags,
  security: noCredentials,
  request: { body: body(EmailStartSchema) },
  responses: {
    202: json(EmailStartedSchema, 'A code was sent if the address can receive mail'),
    429: problemContent('Too many requests, or too many codes for this address (`rate_limit_exceeded`)'),
    503: problemContent('Email delivery unavailable'),
  },
})

export const emailVerify = createRoute({
  method: 'post',
  path: '/v1/auth/email/verify',
  operationId: 'verifyEmailSignIn',
  summary: 'Sign in with the emailed code',
  description: `Needs no credential. Opens a session: the answer holds an access token, a single-use refresh token, the user and the workspace the session acts for (the first one the user joined). A wrong code is 400 \`invalid_input\` with \`field: code\`; after ${MAX_CODE_ATTEMPTS} failed attempts the code stops working and a new one must be requested.`,
  tags,
  security: noCredentials,
  request: { body: body(EmailVerifySchema) },
  responses: {
    200: json(SessionSchema, 'Signed in; the user and default workspace are created on first sign-in'),
    400: problemContent('A wrong, expired or used code (`field: code`), or an invalid body'),
  },
})

export const refresh = createRoute({
  method: 'post',
  path: '/v1/auth/refresh',
  operationId: 'refreshSession',
  summary: 'Exchange a refresh token for a new token pair',
  description: `Needs no Authorization header: the refresh token in the body is the credential. The token is rotated: the answer holds a new access token and a new refresh token, and the one sent is used up. Refreshes that race (parallel requests, two tabs, two processes sharing a session) all get the same new refresh token: a used token sent again within ${REFRESH_REUSE_WINDOW_MS / 1000} s of its exchange answers the session's newest one. Sent later, it is treated as reuse and revokes the whole session (401 \`invalid_api_key\`).`,
  tags,
  security: noCredentials,
  request: { body: body(RefreshSchema, false) },
  responses: {
    200: json(TokenPairSchema, 'A new pair; the refresh token given is used up'),
    401: unauthorized(
      'Refresh token absent, unknown, expired, or reused after the reuse window (which revokes the session)',
    ),
  },
})

export const logout = createRoute({
  method: 'post',
  path: '/v1/auth/logout',
  operationId: 'logout',
  summary: 'Sign out: revoke the session',
  description:
    "Send the session's refresh token in the body, or call with its access token as Bearer. Every refresh and access token of the session stops working at once; an unknown refresh token is accepted, so the answer reveals nothing about it. An API key is 400 `invalid_input`: revoke keys with DELETE /v1/api-keys/{id}.",
  tags,
  security: optionalBearer,
  request: { body: body(LogoutSchema, false) },
  responses: {
    204: { description: 'The session is revoked: its refresh and access tokens stop working' },
    400: problemContent('An API key as Bearer (revoke keys with DELETE /v1/api-keys/{id}), or an invalid body'),
    401: unauthorized('Neither a refresh token nor a session access token'),
  },
})

export const auth = createRouter()
  .openapi(emailStart, async (c) => {
    await startEmailSignIn(c.env, c.req.valid('json').email)
    return c.json({ status: 'sent' as const }, 202)
  })
  .openapi(emailVerify, async (c) => {
    const { email, code } = c.req.valid('json')
    return c.json(await verifyEmailSignIn(c.env, email, code), 200)
  })
  .openapi(refresh, async (c) => c.json(await refreshSession(c.env, c.req.valid('json')?.refreshToken), 200))
  .openapi(logout, async (c) => {
    const refreshToken = c.req.valid('json')?.refreshToken
    const auth = !refreshToken && bearerToken(c.req.header('authorization')) ? await authenticate(c) : undefined
    await endSession(c.env, { refreshToken, auth })
    return c.body(null, 204)
  })

/** Local mode only: the sign-in emails the dev outbox "sent", newest first (`?to=` filters). */
auth.get('/v1/dev/outbox', async (c) => {
  if (!isLocalEnvironment(c.env)) return notFound(c)
  const to = c.req.query('to')?.trim().toLowerCase() || undefined
  return c.json({ messages: await readDevOutbox(c.env.DB, to) }, 200)
})
