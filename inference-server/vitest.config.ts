import { defineConfig } from 'vitest/config'

// The real model takes seconds to load and ~1 GB: one forked worker, one file at a time,
// and timeouts sized for a 2-core CPU box.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Console output of passing tests is noise (e.g. heic-decode logs "Decoding image failed" for
    // the truncated HEIC that decode.test.ts expects to fail); a failing test's is printed.
    silent: 'passed-only',
  },
})
