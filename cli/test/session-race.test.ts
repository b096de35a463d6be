/**
 * Two `cutout` processes sharing one session file whose access token has lapsed both refresh it
 * at once with the same single-use refresh token: both must succeed and the session must live on
 * (the API answers a token rotated moments ago with its successor, DESIGN.md §3 Session refresh
 * races), where before one of them revoked the other's session and exited 3.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type E2eStack, e2eStack } from '../../test/helpers/e2e-stack'
import { signInByEmail } from '../../test/helpers/local-stack'
import { cli } from './run-cli'

let stack: E2eStack
let config: string

beforeAll(() => {
  stack = e2eStack()
  config = mkdtempSync(join(tmpdir(), 'cutout-cli-race-'))
})
afterAll(() => rmSync(config, { recursive: true, force: true }))

it('two processes refreshing one lapsed session at once both succeed, and the session lives on', async () => {
  const pair = await signInByEmail(stack.baseUrl, `cli-race-${Date.now()}@example.com`)
  const file = join(config, 'cutout', 'session.json')
  mkdirSync(join(config, 'cutout'), { recursive: true })
  // The access token lapsed a minute ago: each process must refresh before its first request.
  const lapsed = { ...pair, expiresAt: Date.now() - 60_000, baseUrl: stack.baseUrl }
  writeFileSync(file, JSON.stringify(lapsed), { mode: 0o600 })
  const env = { XDG_CONFIG_HOME: config, CUTOUT_BASE_URL: stack.baseUrl }

  const runs = await Promise.all([cli(['usage', '--json'], env), cli(['usage', '--json'], env)])
  for (const run of runs) expect(run.code, run.stderr).toBe(0)

  const stored = JSON.parse(readFileSync(file, 'utf8')) as typeof lapsed
  expect(stored.refreshToken).not.toBe(pair.refreshToken)
  expect(stored.expiresAt).toBeGreaterThan(Date.now())
  const usage = await fetch(new URL('/v1/usage', stack.baseUrl), {
    headers: { authorization: `Bearer ${stored.accessToken}` },
  })
  expect(usage.status).toBe(200)
  // And the stored refresh token is the session's live one: the next lapse is refreshed as well.
  writeFileSync(file, JSON.stringify({ ...stored, expiresAt: Date.now() - 60_000 }), { mode: 0o600 })
  const later = await cli(['usage', '--json'], env)
  expect(later.code, later.stderr).toBe(0)
})
