/**
 * @module
 * The Worker's bindings, typed once (Cloudflare templates keep them in one `Env`).
 */
import type { AnonymousClient } from './durable/anonymous-client'
import type { JobRun } from './durable/job-run'
import type { WebhookOutbox } from './durable/webhook-outbox'
import type { Workspace } from './durable/workspace'

export interface Env {
  DB: D1Database
  BUCKET: R2Bucket
  JOB_RUN: DurableObjectNamespace<JobRun>
  WORKSPACE: DurableObjectNamespace<Workspace>
  WEBHOOK_OUTBOX: DurableObjectNamespace<WebhookOutbox>
  ANONYMOUS_CLIENT: DurableObjectNamespace<AnonymousClient>
  /** `development` enables local-only conveniences; anything else is production. */
  ENVIRONMENT: string
  DOCS_URL: string
  /** One URL, or a comma-separated list of inference servers. */
  INFERENCE_URL: string
  INFERENCE_SIGNING_KEY: string
  RESULT_SIGNING_KEY: string
  DNS_RESOLVER_URL: string
  SSRF_ALLOWLIST: string
  /** base64url of 32 bytes: the AES-GCM key that encrypts webhook secrets at rest. */
  DATA_ENCRYPTION_KEY: string
  /** Running jobs per workspace (fair scheduling). */
  WORKSPACE_SLOT_LIMIT?: string
  /** R2 S3 credentials: when all are set, `uploadUrl` is a presigned R2 PUT. */
  R2_ACCOUNT_ID?: string
  R2_ACCESS_KEY_ID?: string
  R2_SECRET_ACCESS_KEY?: string
  R2_BUCKET_NAME?: string
  /** HS256 key of session access tokens (JWT) and the HMAC of email sign-in codes. */
  SESSION_SIGNING_KEY: string
  /** Signs the anonymous `__Host-device` cookie. */
  DEVICE_SIGNING_KEY: string
  /** Requests per minute: per workspace (default 120) and per anonymous device and IP (default 30). */
  RATE_LIMIT_PER_MINUTE?: string
  RATE_LIMIT_ANONYMOUS_PER_MINUTE?: string
  /** Anonymous removals per UTC day per device and per IP (default 7). */
  ANONYMOUS_DAILY_REMOVALS?: string
  /** Cloudflare `send_email` binding; when present, sign-in codes go out through it. */
  EMAIL?: SendEmail
  /** Sender address of sign-in emails (must be allowed for the `send_email` binding). */
  EMAIL_FROM?: string
  /** Origin of the web app that hosts the device-login page (`/device`); defaults to the API origin. */
  APP_URL?: string
  /** Overrides for tests: milliseconds between inference retries and how many. */
  INFERENCE_RETRY_BASE_MS?: string
  INFERENCE_MAX_ATTEMPTS?: string
}

export type AppVariables = {
  requestId: string
  auth: import('./services/auth').AuthContext
}

export type AppEnv = { Bindings: Env; Variables: AppVariables }
