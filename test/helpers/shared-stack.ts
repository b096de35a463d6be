/**
 * One local stack (`npm start`, the real model) shared by the files of a test stage, started once
 * by the stage's globalSetup (test/helpers/e2e-stack.ts) instead of each file waiting for a start
 * of its own (~15 s each on a quiet two-core box, more beside other stages). The stack runs in
 * vitest's main process and the files in a fork, so what a file needs of it is handed over as
 * data: its addresses, key and banner, and for the fault tests, which run last and kill, freeze
 * and stop it, its process id, ports, state directory and the file its output goes to.
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
  /** `npm start`'s process, the leader of its process group. */
  pid: number
  /** Where all it prints is appended, as it comes. */
  outputFile: string
  ports: { edge: number; inference: number }
  /** Its LOCAL_STATE_DIR. */
  stateDir: string
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
  project.provide('sharedStack', {
    baseUrl: stack.baseUrl,
    apiKey: stack.apiKey,
    banner: stack.output(),
    pid: stack.process.pid!,
    outputFile: stack.outputFile,
    ports: stack.ports,
    stateDir: stack.stateDir,
  })
  return () => stack.stop()
}

/** The stack the stage's globalSetup started. */
export const sharedStack = (): SharedStack => inject('sharedStack')
