/**
 * Fails when src/worker-configuration.d.ts is stale against wrangler.toml: regenerates it into a
 * scratch file with the same flags as `npm run cf-typegen` and compares everything below the
 * header line (which names the output path). `wrangler types --check` is not used: in wrangler
 * 4.86 it reports a freshly generated file as out of date.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const committed = join(root, 'src', 'worker-configuration.d.ts')
// Beside the committed file: wrangler writes import paths relative to the output.
const fresh = join(root, 'src', 'worker-configuration.check.d.ts')
const body = (path: string) => readFileSync(path, 'utf8').split('\n').slice(2).join('\n')
try {
  execFileSync(
    join(root, 'node_modules', '.bin', 'wrangler'),
    ['types', fresh, '--include-runtime', 'false', '--strict-vars', 'false', '--env-file', 'worker-secrets.env'],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
  )
  if (body(fresh) !== body(committed)) {
    console.error('src/worker-configuration.d.ts is stale against wrangler.toml: run `npm run cf-typegen`')
    process.exitCode = 1
  } else {
    console.log('src/worker-configuration.d.ts matches wrangler.toml')
  }
} finally {
  rmSync(fresh, { force: true })
}
