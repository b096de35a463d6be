/**
 * The e2e stage's file order (vitest.e2e.config.mts `sequence.sequencer`): vitest's own, with the
 * fault tests last, since they kill and freeze the shared stack's inference server and end by
 * stopping `npm start` (test/e2e/faults.test.ts).
 */
import { basename } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

const LAST = ['faults.test.ts']

export default class LastFiles extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const last = (f: TestSpecification) => LAST.includes(basename(f.moduleId))
    const sorted = await super.sort(files)
    return [...sorted.filter((f) => !last(f)), ...sorted.filter(last)]
  }
}
