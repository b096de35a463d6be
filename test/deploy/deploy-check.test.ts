/**
 * The deploy check (scripts/deploy-check.ts, the `deploy` stage of `npm test`) on Workers made to
 * break it: one that imports Node-only modules, and one over a size limit. The real Worker's bundle
 * is checked by the stage itself.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BundleReport, bundleProblems, bundleWorker, WORKER_SIZE_LIMIT_BYTES } from '../../scripts/deploy-check'

let dir: string
let report: BundleReport

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cutout-deploy-fixture-'))
  writeFileSync(
    join(dir, 'worker.ts'),
    [
      "import { execSync } from 'node:child_process'",
      "import { readFileSync } from 'fs'",
      'export default { fetch: () => new Response(typeof execSync + typeof readFileSync) }',
    ].join('\n'),
  )
  writeFileSync(
    join(dir, 'wrangler.toml'),
    [
      'name = "fixture"',
      'main = "worker.ts"',
      'compatibility_date = "2026-11-17"',
      'compatibility_flags = ["nodejs_compat"]',
    ].join('\n'),
  )
  report = bundleWorker(dir)
}, 60_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('deploy check', () => {
  it('names each Node-only import of a Worker', () => {
    expect(report.externalImports).toEqual(['fs', 'node:child_process'])
    expect(bundleProblems(report)).toEqual([
      'imports "fs", which the Workers runtime does not provide (Node-only)',
      'imports "node:child_process", which the Workers runtime does not provide (Node-only)',
    ])
  })

  it('refuses a bundle over the size limit, measured compressed', () => {
    const clean: BundleReport = { ...report, externalImports: ['cloudflare:workers'], polyfills: [] }
    expect(bundleProblems(clean)).toEqual([])
    const large = { ...clean, bytes: 9 * 1024 * 1024, gzipBytes: WORKER_SIZE_LIMIT_BYTES + 1 }
    expect(bundleProblems(large)).toEqual(['is 3145729 bytes compressed, over the limit of 3145728 bytes (3.00 MiB)'])
    expect(bundleProblems({ ...clean, gzipBytes: WORKER_SIZE_LIMIT_BYTES })).toEqual([])
  })
})
