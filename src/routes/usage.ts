/**
 * @module
 * GET /v1/usage (SPEC.md §4): a workspace's credits, or an anonymous device's daily allowance;
 * DELETE /v1/device forgets the anonymous cookie without resetting the allowance.
 */
import { createRoute } from '@hono/zod-openapi'
import { createRouter } from '../lib/router'
import { authorize } from '../middleware/auth'
import { json, noCredentials, optionalBearer } from '../schemas/common'
import { UsageSchema } from '../schemas/usage'
import { anonymousUsage } from '../services/anonymous'
import { getUsage } from '../services/credits'
import { clearedDeviceCookie } from '../services/device'

export const getOne = createRoute({
  method: 'get',
  path: '/v1/usage',
  operationId: 'getUsage',
  summary: 'Get the remaining credits or anonymous allowance',
  tags: ['Usage'],
  security: optionalBearer,
  middleware: [authorize('GET /v1/usage')] as const,
  responses: {
    200: json(
      UsageSchema,
      'A workspace: kind, limit, available, held, used, periodEndsAt. Anonymous: remaining and the UTC reset',
    ),
  },
})

export const forgetDevice = createRoute({
  method: 'delete',
  path: '/v1/device',
  operationId: 'forgetDevice',
  summary: "Clear this browser's anonymous device cookie",
  tags: ['Usage'],
  security: noCredentials,
  responses: {
    204: { description: 'The anonymous device cookie is cleared; the allowance is not reset' },
  },
})

export const usage = createRouter()
  .openapi(getOne, async (c) => {
    const auth = c.get('auth')
    if (auth.kind === 'anonymous') return c.json(await anonymousUsage(c.env, auth), 200)
    return c.json(await getUsage(c.env.DB, auth.workspaceId), 200)
  })
  .openapi(forgetDevice, (c) => {
    c.header('set-cookie', clearedDeviceCookie())
    return c.body(null, 204)
  })
