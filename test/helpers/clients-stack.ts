/**
 * The clients stage's shared stack (test/helpers/shared-stack.ts): vitest.clients.config.mts
 * starts it once as its globalSetup and every file of the stage (the SDK's, the CLI's, the MCP
 * server's, the Python client's and the page's) shares it through `clientStack()`. The page test
 * (web/test/page.test.ts) is the only file that makes anonymous previews, so it finds 127.0.0.1's
 * daily allowance whole whatever ran before it; the anonymous rate window it spends on purpose
 * lasts seconds (test/helpers/local-stack.ts) and it waits that out itself, as the page does.
 *
 * Four anonymous removals a day here, not production's seven: the page test spends them all, one
 * model run each, and what it shows (the count going down, the rest waiting unstarted once they
 * run out) needs a few, not seven.
 */
import type { TestProject } from 'vitest/node'
import { provideStack, type SharedStack, sharedStack } from './shared-stack'

export type ClientStack = SharedStack

export const CLIENTS_STACK_ENV = { ANONYMOUS_DAILY_REMOVALS: '4' }

export default function setup(project: TestProject) {
  return provideStack(project, CLIENTS_STACK_ENV)
}

/** The stack the clients stage's globalSetup started. */
export const clientStack = sharedStack
