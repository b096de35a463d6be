/**
 * @module
 * GET /v1/usage (SPEC.md §4): the workspace's credits.
 */
import { createRoute } from '@hono/zod-openapi'
import { errorResponses } from '../errors'
import { createRouter } from '../lib/router'
import { requireAuth } from '../middleware/auth'
import { json } from '../schemas/common'
import { UsageSchema } from '../schemas/usage'
import { getUsage } from '../services/credits'

export const getOne = createRoute({
  method: 'get',
  path: '/v1/usage',
  tags: ['Usage'],
  security: [{ Bearer: [] }],
  middleware: [requireAuth('jobs:read')] as const,
  responses: { 200: json(UsageSchema, 'Credits of this period'), ...errorResponses },
})

export const usage = createRouter().openapi(getOne, async (c) => c.json(await getUsage(c.env.DB, c.get('auth').workspaceId), 200))
