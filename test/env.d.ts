import type { D1Migration } from 'cloudflare:test'

// The Worker's Env (src/worker-configuration.d.ts, src/env.ts) plus what only the tests bind.
declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[]
      FIXTURE_ORIGIN: string
      /** An allowed origin where nothing listens (connection refused). */
      CLOSED_ORIGIN: string
    }
  }
}
