/**
 * The Python client (clients/python): its pytest suite passes with Debian's interpreter (/usr/bin/python3, which
 * sees Debian's python3-httpx and python3-pytest; .ci/run installs them) against the clients
 * stage's local stack (test/helpers/e2e-stack.ts), handed over as CUTOUT_BASE_URL and
 * CUTOUT_API_KEY. No test may be skipped: a skip would mean the stack was not reached.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { e2eStack } from '../helpers/e2e-stack'

const PYTHON = '/usr/bin/python3'
const CLIENT_DIR = fileURLToPath(new URL('../../clients/python', import.meta.url))

it('passes its pytest suite against the local stack, nothing skipped', () => {
  const { baseUrl, apiKey } = e2eStack()
  const run = spawnSync(PYTHON, ['-m', 'pytest', '-q', '-rs', '-p', 'no:cacheprovider', CLIENT_DIR], {
    cwd: CLIENT_DIR,
    encoding: 'utf8',
    env: { ...process.env, CUTOUT_BASE_URL: baseUrl, CUTOUT_API_KEY: apiKey, PYTHONDONTWRITEBYTECODE: '1' },
    timeout: 390_000,
  })
  const output = `${run.stdout}${run.stderr}${run.error ? `\n${run.error.message}` : ''}`
  expect(run.status, output).toBe(0)
  expect(output).toMatch(/\d+ passed/)
  expect(output, 'a test was skipped').not.toMatch(/skipped/)
}, 400_000)
