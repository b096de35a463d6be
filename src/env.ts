/**
 * @module
 * The Worker's bindings, typed once. Bindings, vars and required secrets come from `wrangler types`
 * (src/worker-configuration.d.ts, `npm run cf-typegen`, checked fresh by `npm test`); wrangler.toml
 * cannot declare optional secrets and bindings, so they are added here. The optional tunables
 * (deadlines, retries, windows; the tests shrink some) are not: `ConfigEnv` in src/config.ts
 * declares them, with their defaults, and `loadConfig` is the one reader.
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
