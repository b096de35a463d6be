import { defineConfig } from 'vitest/config'

// End-to-end: `npm start` (wrangler dev + the inference server with the real model) driven through
// the public HTTP API from plain Node. One file at a time; the first start may reassemble the model.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    // The fault tests are a stage of their own (vitest.faults.config.mts).
    exclude: ['test/e2e/faults.test.ts'],
    // One stack for every file of the stage (test/helpers/e2e-stack.ts), local mode's tests too.
    globalSetup: ['./test/helpers/e2e-stack.ts'],
    environment: 'node',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 420_000,
    // Console output of passing tests is noise; a failing test's is printed with its error.
    silent: 'passed-only',
  },
})
