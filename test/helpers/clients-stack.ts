/**
 * The clients stage's shared stack (test/helpers/shared-stack.ts): vitest.clients.config.mts
 * starts it once as its globalSetup and the SDK's, the CLI's, the MCP server's, the Python
 * client's and most of the page's test files share it through `clientStack()`. The page test
 * (web/test/page.test.ts) keeps its own stack: it spends its stack's anonymous rate-limit window
 * on purpose, which would leak into whichever file ran after it.
 */
import type { TestProject } from 'vitest/node'
import { provideStack, type SharedStack, sharedStack } from './shared-stack'

export type ClientStack = SharedStack

export default function setup(project: TestProject) {
  return provideStack(project)
}

/** The stack the clients stage's globalSetup started. */
export const clientStack = sharedStack
