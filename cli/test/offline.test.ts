/**
 * The built CLI against a stand-in API (cli/test/fake-api.ts) for what the real stack cannot be
 * made to show on demand: a stored session never goes to another API than its own.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type FakeApi, startFakeApi } from './fake-api'
import { cli } from './run-cli'

let work: string
let home: FakeApi
let other: FakeApi

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'cutout-cli-offline-'))
  home = await startFakeApi()
  other = await startFakeApi()
})

afterAll(async () => {
  await home?.close()
  await other?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

afterEach(() => {
  home.seen.length = 0
  other.seen.length = 0
})

/** A config directory holding a session signed in to `baseUrl`. */
function sessionFor(baseUrl: string, expiresAt = Date.now() + 3_600_000) {
  const config = mkdtempSync(join(work, 'config-'))
  mkdirSync(join(config, 'cutout'))
  const file = join(config, 'cutout', 'session.json')
  const session = { accessToken: 'at_home', refreshToken: 'rt_home', expiresAt, baseUrl }
  writeFileSync(file, JSON.stringify(session), { mode: 0o600 })
  return { config, file, session }
}

describe('a stored session and the base URL', () => {
  it.each([
    ['--base-url', (url: string) => ({ args: ['--base-url', url], env: {} })],
    ['CUTOUT_BASE_URL', (url: string) => ({ args: [], env: { CUTOUT_BASE_URL: url } })],
  ])('is not sent to another API named by %s, not even to refresh it; the file is left as it was', async (_, pick) => {
    const { config, file, session } = sessionFor(home.baseUrl, Date.now() - 1000) // expired: would refresh
    const { args, env } = pick(other.baseUrl)
    const run = await cli([...args, 'usage'], { ...env, XDG_CONFIG_HOME: config })
    expect(run.code, run.stderr).toBe(3)
    expect(run.stderr).toContain(`Not signed in to ${other.baseUrl}`)
    expect(run.stderr).toContain(home.baseUrl)
    expect(other.seen).toEqual([])
    expect(home.seen).toEqual([])
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(session)
  })

  it('is used for its own API, whatever the spelling of the URL', async () => {
    const { config } = sessionFor(`${home.baseUrl}/`)
    const run = await cli(['--base-url', home.baseUrl.replace('http://', 'HTTP://'), 'usage', '--json'], {
      XDG_CONFIG_HOME: config,
    })
    expect(run.code, run.stderr).toBe(0)
    expect(home.seen.map((r) => r.headers.authorization)).toEqual(['Bearer at_home'])
  })

  it('logout with another API named revokes nothing there and keeps the session', async () => {
    const { config, file } = sessionFor(home.baseUrl)
    const run = await cli(['--base-url', other.baseUrl, 'logout'], { XDG_CONFIG_HOME: config })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`Not signed in to ${other.baseUrl}`)
    expect(other.seen).toEqual([])
    expect(JSON.parse(readFileSync(file, 'utf8')).refreshToken).toBe('rt_home')
  })
})
