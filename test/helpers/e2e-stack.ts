/**
 * The e2e stage's shared stack (test/helpers/shared-stack.ts), started once by
 * vitest.e2e.config.mts's globalSetup for the files that only call it (early refusals, "Try it",
 * large results). The fault tests (test/e2e/faults.test.ts) kill its processes and local mode
 * (test/e2e/local-mode.test.ts) tests `npm start` itself: each starts its own.
 *
 * An inference call's deadline scales with its input's pixels, not its output's, so the 49 MP
 * export of test/e2e/large-results.test.ts (from a 0.26 MP photo) gets a 10-minute base: that test
 * is about the stack staying up, not about the deadline, which test/e2e/faults.test.ts covers.
 */
import type { TestProject } from 'vitest/node'
import { provideStack, sharedStack } from './shared-stack'

export const E2E_STACK_ENV = { INFERENCE_DEADLINE_BASE_MS: '600000' }

export default function setup(project: TestProject) {
  return provideStack(project, E2E_STACK_ENV)
}

export const e2eStack = sharedStack
