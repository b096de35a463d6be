import type { D1Migration } from 'cloudflare:test'
import type { ConfigEnv } from '../src/config'

// The Worker's Env (src/worker-configuration.d.ts, src/env.ts) plus what only the tests bind, and
// the tunables (src/config.ts `ConfigEnv`) some tests read or shrink: those wrangler.toml does not
// declare already (wrangler 4.164's types put its vars in a base interface, `__BaseEnv_Env`).
declare global {
  namespace Cloudflare {
    interface Env extends Omit<ConfigEnv, keyof __BaseEnv_Env> {
      TEST_MIGRATIONS: D1Migration[]
      FIXTURE_ORIGIN: string
      /** An allowed origin where nothing listens (connection refused). */
      CLOSED_ORIGIN: string
    }
  }
}
