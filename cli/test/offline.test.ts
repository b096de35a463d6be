/**
 * The built CLI against a stand-in API (cli/test/fake-api.ts) for what the real stack cannot be
 * made to show on demand: a stored session never goes to another API than its own; `batch` over
 * more than 100 images finishes each batch before the next and still reports when one fails;
 * inputs whose outputs would collide are refused before anything is uploaded.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type FakeApi, PNG, problem, startFakeApi } from './fake-api'
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
  home.override = undefined
})

const keyEnv = () => ({ CUTOUT_BASE_URL: home.baseUrl, CUTOUT_API_KEY: 'sk_live_test', XDG_CONFIG_HOME: work })

/** A folder of `count` small PNGs named 000.png, 001.png, … */
function photos(count: number): string {
  const dir = mkdtempSync(join(work, 'photos-'))
  for (let i = 0; i < count; i++) writeFileSync(join(dir, `${String(i).padStart(3, '0')}.png`), PNG)
  return dir
}

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

describe('login over a session for another API', () => {
  it('ends the replaced session at its own API, then keeps only the new one', async () => {
    const { config, file } = sessionFor(home.baseUrl)
    other.override = (req) => {
      if (req.path === '/v1/device-authorizations') {
        const body = {
          deviceCode: 'dc',
          userCode: 'ABCD-EFGH',
          verificationUri: `${other.baseUrl}/device`,
          interval: 0,
        }
        return {
          status: 201,
          body: { ...body, verificationUriComplete: `${body.verificationUri}?user_code=ABCD-EFGH`, expiresIn: 600 },
        }
      }
      if (req.path === '/v1/device-authorizations/token') {
        return {
          status: 200,
          body: { accessToken: 'at_other', refreshToken: 'rt_other', tokenType: 'Bearer', expiresIn: 3600 },
        }
      }
      return undefined
    }
    try {
      const run = await cli(['--base-url', other.baseUrl, 'login'], { XDG_CONFIG_HOME: config })
      expect(run.code, run.stderr).toBe(0)
      expect(home.seen.map((r) => `${r.method} ${r.path} ${r.body}`)).toEqual([
        'POST /v1/auth/logout {"refreshToken":"rt_home"}',
      ])
      expect(run.stderr).toContain(`Signed out of ${home.baseUrl}`)
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ refreshToken: 'rt_other', baseUrl: other.baseUrl })
    } finally {
      other.override = undefined
    }
  })
})

describe('batch over more than 100 images', () => {
  it('follows and downloads each batch before creating the next; a 402 on the second still reports the first', async () => {
    const dir = photos(101)
    let batches = 0
    home.override = (req) =>
      req.method === 'POST' && req.path === '/v1/batches' && ++batches === 2
        ? problem(402, 'quota_exhausted', { detail: 'No credits remain' })
        : undefined
    const run = await cli(['batch', dir, '--json'], keyEnv())
    expect(run.code, run.stderr).toBe(4)
    expect(readdirSync(join(dir, 'cutouts'))).toHaveLength(100)
    const summary = JSON.parse(run.stdout) as { files: { file: string; status: string; error?: string }[] }
    expect(summary.files.filter((f) => f.status === 'done')).toHaveLength(100)
    expect(summary.files.filter((f) => f.status === 'failed')).toEqual([
      expect.objectContaining({ file: join(dir, '100.png'), error: expect.stringMatching(/quota_exhausted/) }),
    ])
    // The second batch was asked for only after the first one's results were downloaded.
    const order = home.seen.map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/g, ':id')}`)
    expect(order.lastIndexOf('GET /v1/jobs/:id/result')).toBeLessThan(order.lastIndexOf('POST /v1/batches'))
    expect(order.filter((o) => o === 'POST /v1/batches')).toHaveLength(2)

    // Run again once credits are back: the 100 are skipped, the last one is done.
    home.override = undefined
    const again = await cli(['batch', dir], keyEnv())
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toMatch(/1 done, 100 skipped/)
    expect(existsSync(join(dir, 'cutouts', '100-cutout.png'))).toBe(true)
  })

  it('stops uploading once the credential is refused: one upload tried, the rest reported, exit 3', async () => {
    const dir = photos(5)
    home.override = (req) =>
      req.method === 'POST' && req.path === '/v1/uploads' ? problem(401, 'invalid_api_key') : undefined
    const run = await cli(['batch', dir, '--concurrency', '1', '--json'], keyEnv())
    expect(run.code, run.stderr).toBe(3)
    expect(home.seen.filter((r) => r.path === '/v1/uploads')).toHaveLength(1)
    expect(home.seen.filter((r) => r.path === '/v1/batches')).toEqual([])
    const summary = JSON.parse(run.stdout) as { files: { status: string }[] }
    expect(summary.files.map((f) => f.status)).toEqual(Array(5).fill('failed'))
  })

  it('prints the summary when the first batch cannot be created', async () => {
    const dir = photos(2)
    home.override = (req) =>
      req.method === 'POST' && req.path === '/v1/batches' ? problem(402, 'quota_exhausted') : undefined
    const run = await cli(['batch', dir], keyEnv())
    expect(run.code, run.stderr).toBe(4)
    expect(run.stdout).toMatch(/0 done, 0 skipped \(already done\), 2 failed/)
  })
})

describe('output names', () => {
  /** Files (PNG bytes, any name) in a fresh folder; returns their paths. */
  function files(...names: string[]): string[] {
    const dir = mkdtempSync(join(work, 'names-'))
    return names.map((name) => {
      const path = join(dir, name)
      mkdirSync(join(path, '..'), { recursive: true })
      writeFileSync(path, PNG)
      return path
    })
  }

  it('remove refuses inputs that would write the same output (exit 2), naming both, uploading nothing', async () => {
    const [jpg, png] = files('shoe.jpg', 'shoe.png')
    const run = await cli(['remove', jpg, png], keyEnv())
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`${jpg} and ${png} would both be written to ${join(jpg, '..', 'shoe-cutout.png')}`)
    expect(home.seen).toEqual([])
  })

  it('remove refuses the same name from two folders into one --out', async () => {
    const [a, b] = files('a/x.jpg', 'b/x.jpg')
    const out = join(a, '..', '..', 'out')
    const run = await cli(['remove', a, b, '--out', out, '--output', 'mask'], keyEnv())
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`${a} and ${b} would both be written to ${join(out, 'x-mask.png')}`)
    expect(home.seen).toEqual([])
  })

  it('remove refuses an output that would overwrite another input', async () => {
    const [photo, earlier] = files('a.png', 'a-cutout.png')
    const run = await cli(['remove', photo, earlier], keyEnv())
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`the output of ${photo} would overwrite the input ${earlier}`)
    expect(home.seen).toEqual([])
  })

  it('batch refuses a folder with shoe.jpg and shoe.png before uploading anything', async () => {
    const [jpg, png] = files('shoe.jpg', 'shoe.png')
    const dir = join(jpg, '..')
    const run = await cli(['batch', dir], keyEnv())
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(
      `${jpg} and ${png} would both be written to ${join(dir, 'cutouts', 'shoe-cutout.png')}`,
    )
    expect(home.seen).toEqual([])
  })

  it('a file named like an output is processed when named explicitly (a folder scan skips it)', async () => {
    const [named] = files('shoe-cutout.png')
    const run = await cli(['remove', named], keyEnv())
    expect(run.code, run.stderr).toBe(0)
    expect(existsSync(join(named, '..', 'shoe-cutout-cutout.png'))).toBe(true)
    const scan = await cli(['batch', join(named, '..'), '--json'], keyEnv())
    expect(JSON.parse(scan.stdout).files).toEqual([])
  })
})

describe('rate limits', () => {
  it('a 429 whose Retry-After is hours away is not waited for: exit 4 at once, saying when', async () => {
    home.override = (req) =>
      req.path === '/v1/usage'
        ? {
            ...problem(429, 'rate_limit_exceeded', { retryable: true }),
            headers: { 'content-type': 'application/problem+json', 'retry-after': '7200' },
          }
        : undefined
    const started = Date.now()
    const run = await cli(['usage'], keyEnv())
    expect(run.code).toBe(4)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(run.stderr).toMatch(/rate_limit_exceeded: .*\(try again in 2 h\)/)
    expect(home.seen).toHaveLength(1)
  })
})
