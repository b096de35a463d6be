import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'
import { buildWeb } from './scripts/build-web.ts'
import { freePort, TEST_SIGNING_KEYS } from './test/helpers/ports.mjs'
import { hideExpectedWorkerdLogs } from './test/helpers/workerd-logs.mjs'

hideExpectedWorkerdLogs()
// Wrangler reads wrangler.toml for the pool; at its default level it also says, for every test
// file, that it found the .dev.vars `npm start` writes (the bindings below override all of them).
process.env.WRANGLER_LOG ??= 'warn'

// The inference server, a fixture HTTP server and a DNS-over-HTTPS server run in Node
// (globalSetup) on 127.0.0.1; the Worker under test reaches them over real HTTP. Ports are picked
// here so the bindings and the servers agree.
const inferencePort = await freePort()
const fixturePort = await freePort()
const dohPort = await freePort()
// Nothing listens here: a webhook endpoint on it meets "connection refused" (webhook-failures.test.ts).
const closedPort = await freePort()
process.env.TEST_INFERENCE_PORT = String(inferencePort)
process.env.TEST_FIXTURE_PORT = String(fixturePort)
process.env.TEST_DOH_PORT = String(dohPort)

// wrangler.toml's [assets] directory must exist for the pool to start; it is the page's build.
await buildWeb()

export default defineConfig(async () => ({
  plugins: [
    cloudflareTest({
      main: './src/index.ts',
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        // The optional Analytics Engine binding (wrangler.toml), so the runner's datapoint path
        // runs; miniflare's local dataset keeps nothing, so tests read them through `logSink`.
        analyticsEngineDatasets: { ANALYTICS: { dataset: 'cutout_jobs_test' } },
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations('./migrations'),
          ENVIRONMENT: 'test',
          INFERENCE_URL: `http://127.0.0.1:${inferencePort}`,
          INFERENCE_SIGNING_KEY: TEST_SIGNING_KEYS.inference,
          RESULT_SIGNING_KEY: TEST_SIGNING_KEYS.result,
          SSRF_ALLOWLIST: `127.0.0.1:${fixturePort},127.0.0.1:${closedPort}`,
          // The SSRF guard's real DohResolver asks this server (test/helpers/doh-server.ts), never
          // wrangler.toml's public resolver.
          DNS_RESOLVER_URL: `http://127.0.0.1:${dohPort}/dns-query`,
          FIXTURE_ORIGIN: `http://127.0.0.1:${fixturePort}`,
          CLOSED_ORIGIN: `http://127.0.0.1:${closedPort}`,
          // A `sourceUrl` that never answers is refused after 1 s, not the production 10 s.
          SOURCE_FETCH_TIMEOUT_MS: '1000',
          // An open event stream hears a keepalive comment every 200 ms, not the production 25 s.
          SSE_KEEPALIVE_MS: '200',
          INFERENCE_RETRY_BASE_MS: '50',
          INFERENCE_RETRY_AFTER_MAX_MS: '50',
          INFERENCE_MAX_ATTEMPTS: '3',
          WORKSPACE_SLOT_LIMIT: '2',
          DATA_ENCRYPTION_KEY: TEST_SIGNING_KEYS.data,
          DEVICE_SIGNING_KEY: 'test-device-signing-key-0123456789abcdef',
          // Rate windows of 5 s, not a minute, so the rate-limit tests wait out a Retry-After of
          // seconds. Per window: a generous workspace default so polling tests are not throttled
          // (the rate-limit tests set a workspace's own), and production's 30 per anonymous
          // address: access.test.ts's burst of 31 must fit in one window, and a request took up to
          // 170 ms on this 2-core box under a load of 8.
          RATE_LIMIT_WINDOW_SECONDS: '5',
          RATE_LIMIT_PER_MINUTE: '100000',
          RATE_LIMIT_ANONYMOUS_PER_MINUTE: '30',
          SESSION_SIGNING_KEY: 'test-session-signing-key-0123456789abcdef',
        },
      },
    }),
  ],
  test: {
    include: ['test/worker/**/*.test.ts'],
    setupFiles: ['./test/worker/apply-migrations.ts'],
    globalSetup: ['./test/helpers/global-setup.ts'],
    // Files share one inference server whose proxy some tests switch off: run them one at a time.
    fileParallelism: false,
    // One workerd for all files instead of one each (~4 s of start-up and imports per file);
    // test/worker/apply-migrations.ts empties storage before every file. (@cloudflare/vitest-plugin
    // 1.5 wraps each runner and prototype once, as the old pool's patch did; docs/decisions.md.)
    isolate: false,
    // The pool sometimes never reports the end of a run whose files have all ended; this ends such
    // a run with the files' own result (test/helpers/stalled-run.ts). `npm test` names it too,
    // beside its own reporters (scripts/test.ts).
    reporters: ['default', './test/helpers/stalled-run.ts'],
    // Budgets hold on a machine four times slower than this 2-core box (test/worker/helpers.ts,
    // `testBudget`): this default covers a test with up to two model runs; tests with more set
    // their own. Deadlines inside tests are shorter, so a stuck job fails with its state.
    testTimeout: 180_000,
    hookTimeout: 120_000,
    // Console output of passing tests is noise; a failing test's is printed with its error.
    silent: 'passed-only' as const,
  },
}))
