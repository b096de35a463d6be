/**
 * @module
 * Device authorization (SPEC.md §4, RFC 8628): POST /v1/device-authorizations,
 * GET /v1/device-authorizations/{userCode} and POST …/{userCode}/approve (signed-in session only),
 * POST /v1/device-authorizations/token.
 */
import { createRoute } from '@hono/zod-openapi'
import { problemContent } from '../errors'
import { createRouter } from '../lib/router'
import { requireSession } from '../middleware/auth'
import {
  DeviceApproveSchema,
  DeviceAuthorizationCreateSchema,
  DeviceAuthorizationSchema,
  DeviceAuthorizationViewSchema,
  DeviceTokenRequestSchema,
  TokenPairSchema,
  UserCodeParams,
} from '../schemas/auth'
import { json, noCredentials } from '../schemas/common'
import {
  approveDeviceAuthorization,
  createDeviceAuthorization,
  describeDeviceAuthorization,
  pollDeviceAuthorization,
} from '../services/device-authorizations'

const tags = ['Device authorization']
const jsonBody = <T extends Parameters<typeof json>[0]>(schema: T, required = true) => ({
  required,
  content: { 'application/json': { schema } },
})

export const create = createRoute({
  method: 'post',
  path: '/v1/device-authorizations',
  operationId: 'createDeviceAuthorization',
  summary: 'Start a device sign-in and get the code to show the user',
  description:
    'Needs no credential. Returns a secret `deviceCode` for the client to poll the token endpoint with, and a `userCode` the user confirms at `verificationUri` in a signed-in browser, where `client` is shown to them. The codes expire after `expiresIn` seconds; poll no more often than every `interval` seconds.',
  tags,
  security: noCredentials,
  request: { body: jsonBody(DeviceAuthorizationCreateSchema) },
  responses: {
    201: json(DeviceAuthorizationSchema, 'Show userCode and verificationUri to the user, then poll'),
  },
})

export const getOne = createRoute({
  method: 'get',
  path: '/v1/device-authorizations/{userCode}',
  operationId: 'getDeviceAuthorization',
  summary: 'See which client asked for a device sign-in, before approving it',
  description:
    'Needs a signed-in session; an API key is 403 `insufficient_scope`. The user code is matched in any case, with or without its hyphen. An unknown or expired code is 404 `device_authorization_not_found`.',
  tags,
  security: [{ Bearer: [] }],
  middleware: [requireSession()] as const,
  request: { params: UserCodeParams },
  responses: {
    200: json(DeviceAuthorizationViewSchema, 'The client that asked and whether the code is still pending'),
    403: problemContent('Only a signed-in session, not an API key'),
    404: problemContent('No live code (`device_authorization_not_found`)'),
  },
})

export const approve = createRoute({
  method: 'post',
  path: '/v1/device-authorizations/{userCode}/approve',
  operationId: 'approveDeviceAuthorization',
  summary: 'Approve a device sign-in from a signed-in browser',
  description:
    "Needs a signed-in session; an API key is 403 `insufficient_scope`. Approves the code for the session's workspace, or for `workspaceId` when the user is a member of it; the device then receives a new session for that workspace when it polls. A code already used is 400 `invalid_input`.",
  tags,
  security: [{ Bearer: [] }],
  middleware: [requireSession()] as const,
  request: { params: UserCodeParams, body: jsonBody(DeviceApproveSchema, false) },
  responses: {
    204: { description: 'Approved: the device receives tokens for the workspace on its next poll' },
    403: problemContent('Only a signed-in session may approve, not an API key'),
    404: problemContent(
      'No live code (`device_authorization_not_found`), or a workspace the user is not a member of (`workspace_not_found`)',
    ),
  },
})

export const token = createRoute({
  method: 'post',
  path: '/v1/device-authorizations/token',
  operationId: 'pollDeviceAuthorization',
  summary: "Poll for a device sign-in's tokens",
  description:
    "Needs no credential. Until the user approves, the answer is 428 `authorization_pending` with `Retry-After` set to the interval; polling sooner than the interval is 429 `rate_limit_exceeded` (RFC 8628 slow_down), which lengthens the interval. Once approved, the answer is a new session's access and refresh tokens, handed out once: polling again after that is 400 `invalid_input`.",
  tags,
  security: noCredentials,
  request: { body: jsonBody(DeviceTokenRequestSchema) },
  responses: {
    200: json(TokenPairSchema, 'Approved: the tokens, handed out once'),
    400: problemContent('Unknown, expired or already exchanged device code'),
    428: problemContent('authorization_pending: poll again after interval seconds'),
    429: problemContent('Polled sooner than interval: Retry-After gives the new, longer interval (slow_down)'),
  },
})

export const deviceAuthorizations = createRouter()
  .openapi(create, async (c) =>
    c.json(await createDeviceAuthorization(c.env, c.req.valid('json').client, new URL(c.req.url).origin), 201),
  )
  .openapi(getOne, async (c) => c.json(await describeDeviceAuthorization(c.env, c.req.valid('param').userCode), 200))
  .openapi(approve, async (c) => {
    const auth = c.get('auth')
    await approveDeviceAuthorization(
      c.env,
      { userId: auth.userId!, workspaceId: auth.workspaceId },
      c.req.valid('param').userCode,
      c.req.valid('json')?.workspaceId,
    )
    return c.body(null, 204)
  })
  .openapi(token, async (c) => c.json(await pollDeviceAuthorization(c.env, c.req.valid('json').deviceCode), 200))
