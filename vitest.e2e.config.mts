import { defineConfig } from 'vitest/config'
import LastFiles from './test/helpers/last-files'

// End to end against the real local stack (`npm start` with the real model), one file at a time,
// all of them sharing one stack started here (test/helpers/e2e-stack.ts): local mode, early
// refusals, "Try it" and large results (test/e2e), then the SDK, the CLI, the MCP server (remote
// and `cutout mcp`), the Python client (pytest, test/clients/python.test.ts), the contract walk
// through Prism's validating proxy (test/clients/prism.test.ts) and the web page (in headless
// Chromium), and last the fault tests, which kill, freeze and stop the stack
// (test/e2e/faults.test.ts, test/helpers/last-files.ts). The clients' tests import and run the
// built packages (sdk/dist, cli/dist), which the `e2e` stage of scripts/test.ts builds first.
export default defineConfig({
  test: {
    include: [
      'test/e2e/**/*.test.ts',
      'sdk/test/**/*.test.ts',
      'cli/test/**/*.test.ts',
      'test/mcp/**/*.test.ts',
      'test/clients/**/*.test.ts',
      'web/test/**/*.test.ts',
    ],
    // The generated clients' freshness needs no stack: the contract stage runs it.
    exclude: ['test/clients/generated.test.ts', '**/node_modules/**'],
    environment: 'node',
    globalSetup: ['./test/helpers/e2e-stack.ts'],
    setupFiles: ['./test/helpers/zod-openapi.ts'],
    fileParallelism: false,
    sequence: { sequencer: LastFiles },
    // One fork for every file, in turn, instead of a fresh one each (~2.5 CPU-s of start-up and
    // imports per file, ~30 CPU-s a stage): the files mock nothing and keep no module state that
    // another reads; what they share is the stack and Chromium, as before.
    isolate: false,
    testTimeout: 180_000,
    hookTimeout: 420_000,
    silent: 'passed-only',
  },
})
