/**
 * `npm run lint`'s contract step: the app's /openapi.json, made in Node without a server (as
 * `npm run sdk:generate` makes it), linted by Redocly CLI with the rules in redocly.yaml. Any error
 * or warning fails.
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

const dir = mkdtempSync(join(tmpdir(), 'cutout-openapi-'))
const file = join(dir, 'openapi.json')
try {
  writeFileSync(file, JSON.stringify(await fetchDocument(SERVED_AT), null, 2))
  const lint = spawnSync(
    join(root, 'node_modules', '.bin', 'redocly'),
    ['lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'codeframe'],
    {
      cwd: root,
      encoding: 'utf8',
      // Neither a usage report nor a look-up of npm for a newer version.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  )
  process.stdout.write(lint.stdout)
  process.stderr.write(lint.stderr)
  // Redocly exits 0 on warnings alone; the contract must have none either.
  const warned = /\d+ warnings?\b/.test(lint.stdout + lint.stderr)
  process.exitCode = lint.status !== 0 || warned ? 1 : 0
} finally {
  rmSync(dir, { recursive: true, force: true })
}
