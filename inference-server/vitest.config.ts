import { defineConfig } from 'vitest/config'
import HeavyFirst from './test/heavy-first.js'

// The real model takes seconds to load and ~1 GB per session. Two forked workers, two files at a
// time: a file running the model keeps both cores busy only while the model runs, and the
// decoding, rendering and reference arithmetic around it run on one, so a second file fills the
// other core (issue 32: ~12 % less wall time than one file at a time, measured on a shared 2-core
// box). The files that run longest start first (test/heavy-first.ts). Timeouts are sized for a 2-core CPU box
// with another file beside.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    // A worker runs its files one after another in one process, without a fresh module graph per
    // file: each file's fork and imports cost ~1 s × 37 files (issue 32: 311 → 251 s, all passing).
    // Every file closes the segmenters and servers it opens in afterAll; set this back to true if a
    // file starts to depend on another's leftovers.
    isolate: false,
    sequence: { sequencer: HeavyFirst },
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Console output of passing tests is noise (e.g. heic-decode logs "Decoding image failed" for
    // the truncated HEIC that decode.test.ts expects to fail); a failing test's is printed.
    silent: 'passed-only',
  },
})
