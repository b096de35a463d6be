/**
 * The built CLI (cli/dist/main.js, as `npx cutout` runs it) against the real local stack:
 * a resumable `batch` with progress, `remove` of a missing file and of images the API refuses
 * (exit 2, while a refused option stays exit 1), and `login` by device code
 * approved by an email-signed-in session, after which `usage` works on the stored session.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type E2eStack, e2eStack } from '../../test/helpers/e2e-stack'
import { signInByEmail } from '../../test/helpers/local-stack'
import { cli } from './run-cli'

const FIXTURE = fileURLToPath(new URL('../../test/fixtures/astronaut.png', import.meta.url))

let stack: E2eStack
let work: string

/** A solid red RGBA PNG of `size`×`size`. */
function png(size: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])))
    return Buffer.concat([length, Buffer.from(type), data, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 6, 0, 0, 0], 8)
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 4, Buffer.from([255, 0, 0, 255]))])
  const pixels = deflateSync(Buffer.concat(Array.from({ length: size }, () => row)))
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff
  for (const byte of bytes) {
    crc ^= byte
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1
  }
  return (crc ^ 0xffffffff) >>> 0
}

const keyEnv = () => ({ CUTOUT_BASE_URL: stack.baseUrl, CUTOUT_API_KEY: stack.apiKey, XDG_CONFIG_HOME: work })

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'cutout-cli-'))
  stack = e2eStack()
})

afterAll(async () => {
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('cutout CLI against the local stack', () => {
  it('batch writes three cutouts with progress lines; a second run skips all three', async () => {
    const dir = join(work, 'photos')
    mkdirSync(dir)
    for (const name of ['a', 'b', 'c']) copyFileSync(FIXTURE, join(dir, `${name}.png`))
    const first = await cli(['batch', dir], keyEnv())
    expect(first.code, first.stderr).toBe(0)
    expect(readdirSync(join(dir, 'cutouts')).sort()).toEqual(['a-cutout.png', 'b-cutout.png', 'c-cutout.png'])
    for (const name of ['a', 'b', 'c']) {
      const png = readFileSync(join(dir, 'cutouts', `${name}-cutout.png`))
      expect(png.subarray(1, 4).toString()).toBe('PNG')
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([512, 512])
    }
    expect(first.stderr.match(/^\[\d\/3\] .+ → .+-cutout\.png$/gm)).toHaveLength(3)
    expect(first.stdout).toMatch(/3 done, 0 skipped/)

    const second = await cli(['batch', dir, '--json'], keyEnv())
    expect(second.code, second.stderr).toBe(0)
    const summary = JSON.parse(second.stdout) as { files: { status: string }[] }
    expect(summary.files.map((f) => f.status)).toEqual(['skipped', 'skipped', 'skipped'])
  })

  it('remove of a missing file exits 2 with a clear message and uploads nothing', async () => {
    const run = await cli(['remove', join(work, 'missing.jpg')], keyEnv())
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/cutout: cannot read .*missing\.jpg: no such file/)
  })

  it('remove of an image the API cannot decode or finds too small exits 2; a refused option exits 1', async () => {
    const dir = join(work, 'refused')
    mkdirSync(dir)
    writeFileSync(join(dir, 'tiny.png'), png(16)) // under the 32×32 minimum
    writeFileSync(join(dir, 'broken.png'), png(64).subarray(0, 60)) // a PNG signature, cut short
    const run = await cli(['remove', join(dir, 'tiny.png'), join(dir, 'broken.png'), '--json'], keyEnv())
    expect(run.code, run.stderr).toBe(2)
    const { files } = JSON.parse(run.stdout) as { files: { status: string; exitCode: number; error: string }[] }
    expect(files.map((f) => [f.status, f.exitCode])).toEqual([
      ['failed', 2],
      ['failed', 2],
    ])
    expect(files[0].error).toMatch(/^invalid_input: .*32/)

    const option = await cli(['keys', 'create', '--scopes', 'no:such-scope'], keyEnv())
    expect(option.code, option.stderr).toBe(1)
    expect(option.stderr).toMatch(/invalid_input \(scopes/)
  })

  it('login by device code: approved in a signed-in session, then usage works on the stored session', async () => {
    const config = join(work, 'config')
    const env = { CUTOUT_BASE_URL: stack.baseUrl, XDG_CONFIG_HOME: config }
    let approving: Promise<void> | undefined
    const login = cli(['login'], env, (text) => {
      const code = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(text)?.[1]
      if (code && !approving) approving = approve(code)
    })
    const run = await login
    await approving
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/Open http:\/\/127\.0\.0\.1:\d+\/device and enter the code/)

    const file = join(config, 'cutout', 'session.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const session = JSON.parse(readFileSync(file, 'utf8'))
    expect(session).toMatchObject({ baseUrl: stack.baseUrl, refreshToken: expect.stringMatching(/^rt_/) })

    // An expired access token is refreshed, and the new pair saved.
    writeFileSync(file, JSON.stringify({ ...session, expiresAt: Date.now() - 1000 }), { mode: 0o600 })
    const usage = await cli(['usage', '--json'], { XDG_CONFIG_HOME: config })
    expect(usage.code, usage.stderr).toBe(0)
    expect(JSON.parse(usage.stdout)).toMatchObject({ kind: 'workspace', limit: 50 })
    expect(JSON.parse(readFileSync(file, 'utf8')).refreshToken).not.toBe(session.refreshToken)

    const logout = await cli(['logout'], { XDG_CONFIG_HOME: config })
    expect(logout.code).toBe(0)
    expect((await cli(['usage'], { XDG_CONFIG_HOME: config })).code).toBe(3)
  })
})

async function approve(userCode: string): Promise<void> {
  const { accessToken } = await signInByEmail(stack.baseUrl, `cli-${Date.now()}@example.com`)
  const res = await fetch(new URL(`/v1/device-authorizations/${userCode}/approve`, stack.baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}` },
  })
  if (res.status !== 204) throw new Error(`approve: ${res.status} ${await res.text()}`)
}
