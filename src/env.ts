/**
 * @module
 * The Worker's bindings, typed once. Bindings, vars and required secrets come from `wrangler types`
 * (src/worker-configuration.d.ts, `npm run cf-typegen`, checked fresh by `npm test`); wrangler.toml
 * cannot declare optional secrets and bindings or test overrides, so they are added here.
 */

declare global {
  namespace Cloudflare {
    interface Env {
      /** R2 S3 credentials: when all are set, `uploadUrl` is a presigned R2 PUT. */
      R2_ACCOUNT_ID?: string
      R2_ACCESS_KEY_ID?: string
      R2_SECRET_ACCESS_KEY?: string
      R2_BUCKET_NAME?: string
      /** Cloudflare `send_email` binding; when present, sign-in codes go out through it. */
      EMAIL?: SendEmail
      /** Origin of the web app that hosts the device-login page (`/device`); defaults to the API origin. */
      APP_URL?: string
      /** Overrides for tests: milliseconds between inference retries and how many. */
      INFERENCE_RETRY_BASE_MS?: string
      /** Override for tests: the delay a server's `Retry-After` asks for, in ms, whatever its seconds. */
      INFERENCE_RETRY_AFTER_MS?: string
      INFERENCE_MAX_ATTEMPTS?: string
      /** Inference deadlines (src/services/deadlines.ts); unset means the production defaults. */
      INFERENCE_READY_TIMEOUT_MS?: string
      INFERENCE_DEADLINE_BASE_MS?: string
      INFERENCE_DEADLINE_PER_MP_MS?: string
      INFERENCE_DEADLINE_MAX_MS?: string
      /** How long a `sourceUrl` fetch may take (ms); unset means `SOURCE_FETCH_TIMEOUT_MS` (src/contract/limits.ts). */
      SOURCE_FETCH_TIMEOUT_MS?: string
      /** Milliseconds between SSE keepalive comments (src/durable/event-log.ts); unset means 25 s. */
      SSE_KEEPALIVE_MS?: string
      /** Length of a request-rate window (s); unset means a minute. Tests shorten it (docs/decisions.md). */
      RATE_LIMIT_WINDOW_SECONDS?: string
      /**
       * Workers Analytics Engine dataset: when bound, each job transition is also a datapoint
       * (src/durable/job-telemetry.ts, docs/deploy.md). Optional: without it, the log lines alone.
       */
      ANALYTICS?: AnalyticsEngineDataset
    }
  }
}

type GeneratedEnv = Cloudflare.Env
export type { GeneratedEnv as Env }

export type AppVariables = {
  requestId: string
  /** The request's W3C trace id (src/middleware/trace.ts): its jobs' inference calls carry it on. */
  traceId: string
  auth: import('./services/auth').AuthContext
  /** The config, inference client and clock, made once per request (src/services/context.ts). */
  services: import('./services/context').Services
  /** Set by `resultAccess` when a valid `?exp=…&sig=…` authorized the request (see `resultWorkspace`). */
  resultSigned?: true
}

export type AppEnv = { Bindings: GeneratedEnv; Variables: AppVariables }
