/**
 * The e2e stage's one stack (test/helpers/shared-stack.ts), started by vitest.e2e.config.mts's
 * globalSetup for every file of the stage: `npm start` in local mode (test/e2e/local-mode.test.ts),
 * early refusals, "Try it" and large results. A start costs ~40 s on two cores, so the stage pays
 * it once. The fault tests (test/e2e/faults.test.ts) kill and stop their processes: that stage
 * starts its own, and it is there that `npm start` is stopped by SIGTERM.
 *
 * The SSRF guard resolves names through a DNS-over-HTTPS server on 127.0.0.1 (DNS_RESOLVER_URL),
 * never wrangler.toml's public resolver.
 *
 * An inference call's deadline scales with its input's pixels, not its output's, so the 49 MP
 * export of test/e2e/large-results.test.ts (from a 0.26 MP photo) gets a 10-minute base: that test
 * is about the stack staying up, not about the deadline, which test/e2e/faults.test.ts covers.
 */
import type { TestProject } from 'vitest/node'
import { startDohServer } from './doh-server'
import { freePort } from './ports.mjs'
import { provideStack, sharedStack } from './shared-stack'

export const E2E_STACK_ENV = { INFERENCE_DEADLINE_BASE_MS: '600000' }

export default async function setup(project: TestProject) {
  const dohPort = await freePort()
  const doh = await startDohServer(dohPort)
  const stop = await provideStack(project, {
    ...E2E_STACK_ENV,
    DNS_RESOLVER_URL: `http://127.0.0.1:${dohPort}/dns-query`,
  }).catch(async (err) => {
    await new Promise((resolve) => doh.close(resolve))
    throw err
  })
  return async () => {
    await stop()
    await new Promise((resolve) => doh.close(resolve))
  }
}

export const e2eStack = sharedStack
