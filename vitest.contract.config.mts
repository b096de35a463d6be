import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // …and the test runner's own helpers that need no stack (test/helpers/stalled-run.test.ts).
    include: ['test/contract/**/*.test.ts', 'test/deploy/**/*.test.ts', 'test/helpers/**/*.test.ts'],
    environment: 'node',
    silent: 'passed-only',
  },
})
