/**
 * @module
 * The Worker's bindings, typed once (Cloudflare templates keep them in one `Env`).
 */
import type { JobRun } from './durable/job-run'

export interface Env {
  DB: D1Database
  BUCKET: R2Bucket
  JOB_RUN: DurableObjectNamespace<JobRun>
  /** `development` enables local-only conveniences; anything else is production. */
  ENVIRONMENT: string
  DOCS_URL: string
  /** One URL, or a comma-separated list of inference servers. */
  INFERENCE_URL: string
  INFERENCE_SIGNING_KEY: string
  RESULT_SIGNING_KEY: string
  DNS_RESOLVER_URL: string
  SSRF_ALLOWLIST: string
  /** Overrides for tests: milliseconds between inference retries and how many. */
  INFERENCE_RETRY_BASE_MS?: string
  INFERENCE_MAX_ATTEMPTS?: string
}

export type AppVariables = {
  requestId: string
  auth: import('./services/auth').AuthContext
}

export type AppEnv = { Bindings: Env; Variables: AppVariables }
