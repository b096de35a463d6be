import { z } from '@hono/zod-openapi'

/** An email address (trimmed and lower-cased by the service before use). */
const Email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email())
  .openapi({ type: 'string', format: 'email', example: 'ada@example.com' })

export const EmailStartSchema = z.strictObject({ email: Email }).openapi('EmailSignInStart')

export const EmailStartedSchema = z
  .object({ status: z.literal('sent') })
  .openapi('EmailSignInStarted', { description: 'The same answer whether or not the email has an account' })

export const EmailVerifySchema = z
  .strictObject({
    email: Email,
    code: z
      .string()
      .trim()
      .regex(/^\d{6}$/, 'Expected six digits')
      .openapi({ type: 'string', example: '042917' }),
  })
  .openapi('EmailSignInVerify')

export const TokenPairSchema = z
  .object({
    accessToken: z.string().openapi({ description: 'A JWT for Authorization: Bearer, valid expiresIn seconds' }),
    refreshToken: z.string().openapi({ description: 'Opaque, single use, valid 30 days: POST /v1/auth/refresh' }),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int().openapi({ example: 3600 }),
  })
  .openapi('TokenPair')

export const SessionSchema = TokenPairSchema.extend({
  user: z.object({ id: z.uuid(), email: z.string() }),
  workspace: z.object({ id: z.string(), name: z.string() }),
}).openapi('Session')

/** Absent refresh tokens are the service's 401 (the credential is missing), not a 400. */
export const RefreshSchema = z.strictObject({ refreshToken: z.string().max(200).optional() }).openapi('RefreshRequest')

export const LogoutSchema = z
  .strictObject({ refreshToken: z.string().max(200).optional() })
  .openapi('LogoutRequest', { description: 'Give the refresh token, or call with the session access token' })

export const DeviceAuthorizationCreateSchema = z
  .strictObject({
    client: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .openapi({ description: 'Shown to the user when they approve', example: 'cutout-cli 1.2 on ada-laptop' }),
  })
  .openapi('DeviceAuthorizationCreate')

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
  .openapi('DeviceAuthorization')

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
  .openapi('DeviceAuthorizationApprove')

export const DeviceTokenRequestSchema = z
  .strictObject({ deviceCode: z.string().min(1).max(200) })
  .openapi('DeviceTokenRequest')
