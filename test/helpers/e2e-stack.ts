/**
 * The e2e stage's one stack (test/helpers/shared-stack.ts), started by vitest.e2e.config.mts's
 * globalSetup for every file of the stage: `npm start` in local mode (test/e2e/local-mode.test.ts),
 * early refusals, "Try it" and large results, then the SDK, the CLI, the MCP server (remote and
 * `cutout mcp`), the Python client, the contract walk through Prism and the page, and last the
 * fault tests (test/e2e/faults.test.ts), which kill and freeze its inference server and stop
 * `npm start` by SIGTERM. A start costs ~15 s on a quiet two-core box (more beside other stages),
 * and ~35 CPU-s, so the stage pays it once.
 *
 * - The SSRF guard resolves names through a DNS-over-HTTPS server on 127.0.0.1
 *   (DNS_RESOLVER_URL), never wrangler.toml's public resolver.
 * - Inference deadlines short enough for the fault tests' frozen server to be given up on in
 *   under a minute: a call may take 20 s + 2 s per megapixel (times the kind's scale), a readiness
 *   check 1 s. 20 s, not less: the stage runs beside the Worker tests and then the inference
 *   tests, which keep the cores busy, and a healthy call must never meet its deadline. A removal of a small photo takes ~1.5 s
 *   alone (a fresh server's first ~3 s); the 49 MP export of test/e2e/large-results.test.ts, ~20 s
 *   on two busy cores, gets 20 s + 2 s × 49.5 MP, as an export's deadline counts the canvas it
 *   renders.
 * - Retries back off from 0.5 s, not production's 1 s, and a server's hint to retry later counts
 *   up to 1 s, not 60 s (a server that does not answer hints 5 s, so production waits at least that
 *   between attempts on a lost server): the frozen server is given up on after five retries taking
 *   ~8–16 s, not ~20–31 s. A killed server must be back within that window for the job in flight to
 *   succeed: it was back 1.8 s after the kill here (session 18).
 * - Four anonymous removals a day, not production's seven. The page test (web/test/page.test.ts) is
 *   the only file that makes anonymous previews, so it finds 127.0.0.1's daily allowance whole
 *   whatever ran before it (the early refusals' anonymous requests are refused before a job is
 *   accepted, so they spend none). It spends them all, one model run each, and what it shows (the
 *   count going down, the rest waiting unstarted once they run out) needs a few, not seven. The
 *   anonymous rate window it spends on purpose lasts seconds (test/helpers/local-stack.ts) and it
 *   waits that out itself, as the page does.
 */
import type { TestProject } from 'vitest/node'
import { startChromiumServer } from './browser'
import { startDohServer } from './doh-server'
import { freePort } from './ports.mjs'
import { provideStack, type SharedStack, sharedStack } from './shared-stack'

export type E2eStack = SharedStack

export const E2E_STACK_ENV = {
  INFERENCE_DEADLINE_BASE_MS: '20000',
  INFERENCE_DEADLINE_PER_MP_MS: '2000',
  INFERENCE_READY_TIMEOUT_MS: '1000',
  INFERENCE_RETRY_BASE_MS: '500',
  INFERENCE_RETRY_AFTER_MAX_MS: '1000',
  ANONYMOUS_DAILY_REMOVALS: '4',
}

export default async function setup(project: TestProject) {
  const dohPort = await freePort()
  const doh = await startDohServer(dohPort)
  const closeDoh = () => new Promise((resolve) => doh.close(resolve))
  // One Chromium for the stage's web test files (test/helpers/browser.ts), launched while the stack starts.
  const [launched, started] = await Promise.allSettled([
    startChromiumServer(),
    provideStack(project, { ...E2E_STACK_ENV, DNS_RESOLVER_URL: `http://127.0.0.1:${dohPort}/dns-query` }),
  ])
  if (launched.status === 'rejected' || started.status === 'rejected') {
    await Promise.all([
      launched.status === 'fulfilled' && launched.value.close(),
      started.status === 'fulfilled' && started.value(),
      closeDoh(),
    ])
    throw launched.status === 'rejected' ? launched.reason : (started as PromiseRejectedResult).reason
  }
  const chromium = launched.value
  const stop = started.value
  project.provide('chromiumEndpoint', chromium.wsEndpoint())
  return async () => {
    await Promise.all([stop(), chromium.close(), closeDoh()])
  }
}

/** The stack the stage's globalSetup started. */
export const e2eStack = sharedStack
