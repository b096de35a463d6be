/**
 * Fails when src/worker-configuration.d.ts is stale against wrangler.toml: `wrangler types --check`
 * with the same flags as `npm run cf-typegen`. (Wrangler 4.86 reported a freshly generated file as
 * out of date, so this script used to regenerate into a scratch file and compare; 4.164's check is
 * right both ways, tried in issue 45.)
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { status, stderr } = spawnSync(
  join(root, 'node_modules', '.bin', 'wrangler'),
  [
    'types',
    'src/worker-configuration.d.ts',
    '--include-runtime',
    'false',
    '--strict-vars',
    'false',
    '--env-file',
    'worker-secrets.env',
    '--check',
  ],
  { cwd: root, encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
)
if (status === 0) {
  console.log('src/worker-configuration.d.ts matches wrangler.toml')
} else {
  process.stderr.write(stderr)
  console.error('src/worker-configuration.d.ts is stale against wrangler.toml: run `npm run cf-typegen`')
  process.exitCode = 1
}
