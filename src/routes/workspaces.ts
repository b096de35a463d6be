/**
 * @module
 * GET /v1/workspaces: the workspaces the signed-in user belongs to, so a person can choose the
 * one a device sign-in acts for (the /device page). Not in SPEC.md; see docs/decisions.md.
 */
import { createRoute } from '@hono/zod-openapi'
import { problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { requireSession } from '../middleware/auth'
import { json } from '../schemas/common'
import { WorkspaceListSchema } from '../schemas/workspace'
import { listMemberships } from '../services/users'

export const list = createRoute({
  method: 'get',
  path: '/v1/workspaces',
  operationId: 'listWorkspaces',
  summary: "List the signed-in user's workspaces",
  description:
    "Needs a signed-in session; an API key is 403 `insufficient_scope`. Each workspace the user is a member of comes with the user's role in it, so the user can choose the one a device sign-in acts for.",
  tags: ['Sign-in'],
  security: [{ Bearer: [] }],
  middleware: [requireSession()] as const,
  responses: {
    200: json(WorkspaceListSchema, 'Oldest membership first; `current` marks the one this session acts for'),
    403: problemContent('Only a signed-in session, not an API key'),
  },
})

export const workspaces = createRouter().openapi(list, async (c) => {
  const auth = c.get('auth')
  return c.json({ workspaces: await listMemberships(c.env.DB, auth.userId!, auth.workspaceId) }, 200)
})
