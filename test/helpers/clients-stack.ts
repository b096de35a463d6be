/**
 * One local stack (`npm start`, the real model) for the clients stage: vitest.clients.config.mts
 * starts it once as its globalSetup and the SDK's and the CLI's test files share it through
 * `clientStack()`, instead of each waiting for a start of its own. The page test
 * (web/test/page.test.ts) keeps its own stack: it spends its stack's anonymous rate-limit window
 * on purpose, which would leak into whichever file ran after it.
 */
import { inject } from 'vitest'
import type { TestProject } from 'vitest/node'
import { startLocalStack } from './local-stack'

/** What a client needs of the shared stack. */
export interface ClientStack {
  baseUrl: string
  /** The seeded development API key (all scopes, 1000 credits). */
  apiKey: string
}

declare module 'vitest' {
  export interface ProvidedContext {
    clientStack: ClientStack
  }
}

export default async function setup(project: TestProject) {
  const stack = await startLocalStack()
  project.provide('clientStack', { baseUrl: stack.baseUrl, apiKey: stack.apiKey })
  return () => stack.stop()
}

/** The stack the clients stage's globalSetup started. */
export const clientStack = (): ClientStack => inject('clientStack')
