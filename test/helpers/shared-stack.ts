/**
 * One local stack (`npm start`, the real model) shared by the files of a test stage, started once
 * by the stage's globalSetup (test/helpers/e2e-stack.ts) instead of each file waiting for a start
 * of its own (~15 s each on a quiet two-core box, more beside other stages). Files that need a
 * stack of their own (one they kill, restart or spend the rate window of) still start it themselves.
 */
import { inject } from 'vitest'
import type { TestProject } from 'vitest/node'
import { startLocalStack } from './local-stack'

/** What a test needs of the shared stack. */
export interface SharedStack {
  baseUrl: string
  /** The seeded development API key (all scopes, 1000 credits). */
  apiKey: string
  /** What `npm start` printed by the time it was ready (its banner). */
  banner: string
}

declare module 'vitest' {
  export interface ProvidedContext {
    sharedStack: SharedStack
  }
}

/** Starts the stack with `env` on top of the test environment, hands it to the stage's files, and returns its stop. */
export async function provideStack(
  project: TestProject,
  env: Record<string, string> = {},
): Promise<() => Promise<void>> {
  const stack = await startLocalStack(env)
  project.provide('sharedStack', { baseUrl: stack.baseUrl, apiKey: stack.apiKey, banner: stack.output() })
  return () => stack.stop()
}

/** The stack the stage's globalSetup started. */
export const sharedStack = (): SharedStack => inject('sharedStack')
