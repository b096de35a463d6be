/**
 * The order test files start in (vitest.config.ts `sequence.sequencer`): the files that run the
 * real model for a minute or more first, longest first, so that with two workers the last minutes
 * are not one long file running alone. Vitest's own order (longest first from its cache, else
 * largest file first) has no cache on a fresh clone, and file size says little here: graph.test.ts
 * is small and the longest. A file not listed keeps vitest's order, after these.
 */
import { basename } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Measured on 2 cores (issue 32), longest first. */
const HEAVY = [
  'graph.test.ts',
  'reference.test.ts',
  'segmentation.test.ts',
  'catalog.test.ts',
  'refinement.test.ts',
  'server.test.ts',
  'profiles.test.ts',
  'tryon.test.ts',
  'sessions.test.ts',
]

export default class HeavyFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = HEAVY.indexOf(basename(f.moduleId))
      return i < 0 ? HEAVY.length : i
    }
    // Array.prototype.sort is stable: files not listed keep the base order among themselves.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}
