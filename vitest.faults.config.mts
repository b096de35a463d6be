import { defineConfig } from 'vitest/config'

// The inference server's faults under `npm start` (test/e2e/faults.test.ts), against the real
// model: a stage of its own, so `npm test` runs it after the Worker stage while the rest of the
// end-to-end tests and the clients run beside them (scripts/test.ts, LANES). It starts its own
// stack (it kills and freezes its processes), so it takes no shared one.
export default defineConfig({
  test: {
    include: ['test/e2e/faults.test.ts'],
    environment: 'node',
    testTimeout: 180_000,
    hookTimeout: 420_000,
    // Console output of passing tests is noise; a failing test's is printed with its error.
    silent: 'passed-only',
  },
})
