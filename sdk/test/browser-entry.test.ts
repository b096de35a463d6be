/**
 * `@cutout/sdk` (the package's root entry, as built) is browser-safe and carries what the page
 * uses: bundled for the browser it resolves no `node:` module, and it exports the SSE reader, the
 * resuming event follower, the wait, the problem type and the terminal statuses.
 */
import { build } from 'esbuild'
import { TERMINAL_STATUSES as SDK_TERMINAL } from '@cutout/sdk'
import { expect, it } from 'vitest'
import { TERMINAL_STATUSES } from '../../src/contract/stages'

it('bundles for the browser without a node: import and exports the page’s modules', async () => {
  const result = await build({
    stdin: { contents: "export * from '@cutout/sdk'", resolveDir: import.meta.dirname, loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  })
  const inputs = Object.keys(result.metafile.inputs)
  expect(inputs.filter((path) => path.startsWith('node:'))).toEqual([])
  const [output] = Object.values(result.metafile.outputs)
  expect(output.exports).toEqual(
    expect.arrayContaining([
      'readSse',
      'followEvents',
      'waitForJob',
      'isTerminalStatus',
      'TERMINAL_STATUSES',
      'CutoutProblem',
      'retryAfterSeconds',
    ]),
  )
})

it('lists the terminal statuses of the API’s contract', () => {
  expect(SDK_TERMINAL).toEqual(TERMINAL_STATUSES)
})
