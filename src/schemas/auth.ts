import { z } from '@hono/zod-openapi'

const EXAMPLE_REFRESH_TOKEN = 'rt_EXAMPLE-only_not-a-real-token_0000000000000'
const EXAMPLE_DEVICE_CODE = 'dc_EXAMPLE-only_not-a-real-code_00000000000000'
const EXAMPLE_TOKEN_PAIR = {
  // Header {"alg":"HS256","typ":"at+jwt"}; the payload and signature are placeholders.
  accessToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJleGFtcGxlIn0.c2lnbmF0dXJl',
  refreshToken: EXAMPLE_REFRESH_TOKEN,
  tokenType: 'Bearer' as const,
  expiresIn: 3600,
}

/** An email address (trimmed and lower-cased by the service before use). */
const Email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email())
  .openapi({ type: 'string', format: 'email', example: 'ada@example.com' })

export const EmailStartSchema = z
  .strictObject({ email: Email })
  .openapi('EmailSignInStart', { example: { email: 'ada@example.com' } })

export const EmailStartedSchema = z.object({ status: z.literal('sent') }).openapi('EmailSignInStarted', {
  description: 'The same answer whether or not the email has an account',
  example: { status: 'sent' },
})

export const EmailVerifySchema = z
  .strictObject({
    email: Email,
    code: z
      .string()
      .trim()
      .regex(/^\d{6}$/, 'Expected six digits')
      .openapi({ type: 'string', example: '042917' }),
  })
  .openapi('EmailSignInVerify', { example: { email: 'ada@example.com', code: '042917' } })

export const TokenPairSchema = z
  .object({
    accessToken: z.string().openapi({ description: 'A JWT for Authorization: Bearer, valid expiresIn seconds' }),
    refreshToken: z.string().openapi({ description: 'Opaque, single use, valid 30 days: POST /v1/auth/refresh' }),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int().openapi({ example: 3600 }),
  })
  .openapi('TokenPair', { example: EXAMPLE_TOKEN_PAIR })

export const SessionSchema = TokenPairSchema.extend({
  user: z.object({ id: z.uuid(), email: z.string() }),
  workspace: z.object({ id: z.string(), name: z.string() }),
}).openapi('Session', {
  example: {
    ...EXAMPLE_TOKEN_PAIR,
    user: { id: 'e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b', email: 'ada@example.com' },
    workspace: { id: 'f0e1d2c3-b4a5-4968-8776-655443322110', name: 'Personal' },
  },
})

/** Absent refresh tokens are the service's 401 (the credential is missing), not a 400. */
export const RefreshSchema = z
  .strictObject({ refreshToken: z.string().max(200).optional() })
  .openapi('RefreshRequest', { example: { refreshToken: EXAMPLE_REFRESH_TOKEN } })

export const LogoutSchema = z.strictObject({ refreshToken: z.string().max(200).optional() }).openapi('LogoutRequest', {
  description: 'Give the refresh token, or call with the session access token',
  example: { refreshToken: EXAMPLE_REFRESH_TOKEN },
})

export const DeviceAuthorizationCreateSchema = z
  .strictObject({
    client: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .openapi({ description: 'Shown to the user when they approve', example: 'cutout-cli 1.2 on ada-laptop' }),
  })
  .openapi('DeviceAuthorizationCreate', { example: { client: 'cutout-cli 1.2 on ada-laptop' } })

export const DeviceAuthorizationSchema = z
  .object({
    deviceCode: z
      .string()
      .openapi({ description: 'Secret; the client polls POST /v1/device-authorizations/token with it' }),
    userCode: z.string().openapi({ example: 'BDFG-HJKL', description: 'What the user confirms in the browser' }),
    verificationUri: z.string(),
    verificationUriComplete: z.string(),
    expiresIn: z.number().int().openapi({ example: 600 }),
    interval: z.number().int().openapi({ example: 5, description: 'Seconds between polls' }),
  })
  .openapi('DeviceAuthorization', {
    example: {
      deviceCode: EXAMPLE_DEVICE_CODE,
      userCode: 'BDFG-HJKL',
      verificationUri: 'https://cutout.example/device',
      verificationUriComplete: 'https://cutout.example/device?user_code=BDFG-HJKL',
      expiresIn: 600,
      interval: 5,
    },
  })

export const UserCodeParams = z.object({
  userCode: z
    .string()
    .min(1)
    .max(32)
    .openapi({ param: { name: 'userCode', in: 'path' }, example: 'BDFG-HJKL' }),
})

export const DeviceApproveSchema = z
  .strictObject({
    workspaceId: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: "A workspace the user belongs to; defaults to the session's" }),
  })
  .openapi('DeviceAuthorizationApprove', { example: { workspaceId: 'f0e1d2c3-b4a5-4968-8776-655443322110' } })

export const DeviceTokenRequestSchema = z
  .strictObject({ deviceCode: z.string().min(1).max(200) })
  .openapi('DeviceTokenRequest', { example: { deviceCode: EXAMPLE_DEVICE_CODE } })

export const DeviceAuthorizationViewSchema = z
  .object({
    userCode: z.string(),
    client: z.string().openapi({ description: 'What the device said it is when it asked' }),
    status: z.enum(['pending', 'approved']).openapi({ description: 'approved once approved (or exchanged)' }),
    expiresAt: z.iso.datetime(),
  })
  .openapi('DeviceAuthorizationView', {
    example: {
      userCode: 'BDFG-HJKL',
      client: 'cutout-cli 1.2 on ada-laptop',
      status: 'pending',
      expiresAt: '2026-05-04T10:10:00.000Z',
    },
  })
