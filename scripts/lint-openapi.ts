/**
 * `npm run lint`'s contract step: the app's /openapi.json, made in Node without a server (as
 * `npm run sdk:generate` makes it), linted by the field's two OpenAPI linters: Redocly CLI with the
 * rules in redocly.yaml, and Spectral with its whole `spectral:oas` ruleset (.spectral.yaml). Any
 * error or warning from either fails.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fetchDocument } from './lib/sdk-schema'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** The origin `npm start` serves the document from, so `servers` reads as it does there. */
const SERVED_AT = 'http://127.0.0.1:8787/openapi.json'

/** Runs a linter's CLI from node_modules/.bin, prints what it said, and says whether it passed. */
function lint(name: string, args: string[], passed: (output: string, status: number | null) => boolean): boolean {
  const run = spawnSync(join(root, 'node_modules', '.bin', name), args, {
    cwd: root,
    encoding: 'utf8',
    // Neither a usage report nor a look-up of npm for a newer version.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  })
  process.stdout.write(run.stdout)
  process.stderr.write(run.stderr)
  const ok = passed(run.stdout + run.stderr, run.status)
  if (!ok) console.error(`${name}: the contract did not pass`)
  return ok
}

const dir = mkdtempSync(join(tmpdir(), 'cutout-openapi-'))
const file = join(dir, 'openapi.json')
try {
  writeFileSync(file, JSON.stringify(await fetchDocument(SERVED_AT), null, 2))
  const results = [
    // Redocly exits 0 on warnings alone; the contract must have none either.
    lint(
      'redocly',
      ['lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'codeframe'],
      (output, status) => status === 0 && !/\d+ warnings?\b/.test(output),
    ),
    // Spectral exits non-zero on anything at or above --fail-severity.
    lint(
      'spectral',
      ['lint', file, '--ruleset', join(root, '.spectral.yaml'), '--fail-severity', 'warn', '--format', 'stylish'],
      (_, status) => status === 0,
    ),
  ]
  process.exitCode = results.every(Boolean) ? 0 : 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
