/**
 * The built CLI refuses a file the API would refuse by its size or header (over 50 MB, not an
 * image, over 25 megapixels, under 32×32) itself, in the API's words, before any of it is
 * uploaded (issue 43.6); `cutout mcp` does the same for a `path`, so a file that is no image
 * (/etc/shadow) never leaves the machine (issue 43.5). Against the stand-in API
 * (cli/test/fake-api.ts), which records every request, so "nothing was uploaded" is seen.
 */
import { copyFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import sharp from 'sharp'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { checkDimensions, checkImageBytes, checkSniffedImage, MAX_IMAGE_BYTES } from '../../src/lib/image-sniff'
import { type FakeApi, PNG, startFakeApi } from './fake-api'
import { cli } from './run-cli'

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url))
/** The photo of the issue: 6336×3960 is 25.09 MP, just over the limit. */
const [WIDE, TALL] = [6336, 3960]

let work: string
let api: FakeApi
/** Files by what the API would answer them. */
let files: { photo: string; huge: string; text: string; tiny: string; heavy: string }

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'cutout-cli-checks-'))
  api = await startFakeApi()
  const write = (name: string, bytes: string | Uint8Array) => {
    writeFileSync(join(work, name), bytes)
    return join(work, name)
  }
  // One colour compresses to a few hundred kilobytes; nothing here decodes it.
  const huge = await sharp({ create: { width: WIDE, height: TALL, channels: 3, background: '#808080' } })
    .jpeg({ quality: 50 })
    .toBuffer()
  const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#808080' } })
    .png()
    .toBuffer()
  const heavy = write('heavy.png', PNG)
  truncateSync(heavy, MAX_IMAGE_BYTES + 1) // a sparse file: a valid header, then zeros
  files = {
    photo: write('photo.png', PNG),
    huge: write('huge.jpg', huge),
    text: write('shadow.png', 'root:$6$not-an-image:19000:0:99999:7:::\n'),
    tiny: write('tiny.png', tiny),
    heavy,
  }
})

afterAll(async () => {
  await api?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

afterEach(() => {
  api.seen.length = 0
})

const keyEnv = () => ({ CUTOUT_BASE_URL: api.baseUrl, CUTOUT_API_KEY: 'sk_live_test', XDG_CONFIG_HOME: work })
const uploads = () => api.seen.filter((r) => r.path.startsWith('/v1/uploads'))

/** What the API answers each refused file with: its code and detail (src/lib/image-sniff.ts). */
const REFUSALS = () => ({
  [files.huge]: checkDimensions(WIDE, TALL),
  [files.text]: checkSniffedImage(null),
  [files.tiny]: checkDimensions(16, 16),
  [files.heavy]: checkImageBytes(MAX_IMAGE_BYTES + 1),
})

describe('cutout remove and batch', () => {
  it('refuse a file the API would refuse, in its words, exit 2, uploading nothing of it', async () => {
    const refused = REFUSALS()
    const run = await cli(['remove', files.photo, ...Object.keys(refused), '--json'], keyEnv())
    expect(run.code, run.stderr).toBe(2)
    const outcome = JSON.parse(run.stdout) as { files: { file: string; status: string; error?: string }[] }
    const byFile = new Map(outcome.files.map((f) => [f.file, f]))
    expect(byFile.get(files.photo)?.status).toBe('done')
    for (const [file, refusal] of Object.entries(refused)) {
      expect(byFile.get(file)).toMatchObject({ status: 'failed', exitCode: 2 })
      expect(byFile.get(file)?.error).toBe(`${refusal?.code}: ${refusal?.message}`)
    }
    // The words of the photo, as the API says them.
    expect(byFile.get(files.huge)?.error).toBe(
      'image_too_large: Expected at most 25 megapixels but the image is 6336×3960',
    )
    // Only the photo went up: one upload reserved, one PUT, one complete.
    expect(uploads().map((r) => r.method)).toEqual(['POST', 'PUT', 'POST'])
  })

  it('batch goes on with the rest of the folder and uploads only what the API would take', async () => {
    const dir = mkdtempSync(join(work, 'folder-'))
    writeFileSync(join(dir, 'a.png'), PNG)
    copyFileSync(files.huge, join(dir, 'b.jpg'))
    const run = await cli(['batch', dir, '--json'], keyEnv())
    expect(run.code, run.stderr).toBe(2)
    const outcome = JSON.parse(run.stdout) as { files: { file: string; status: string; error?: string }[] }
    expect(outcome.files.map((f) => [f.file, f.status])).toEqual([
      [join(dir, 'b.jpg'), 'failed'],
      [join(dir, 'a.png'), 'done'],
    ])
    expect(outcome.files[0].error).toMatch(/^image_too_large: Expected at most 25 megapixels/)
    expect(uploads().filter((r) => r.method === 'PUT')).toHaveLength(1)
  })
})

describe('cutout mcp: remove_background with a local path', () => {
  let client: Client

  beforeAll(async () => {
    client = new Client({ name: 'local-checks', version: '1' })
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CUTOUT_')))
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp'],
      env: { ...(env as Record<string, string>), ...keyEnv() },
      stderr: 'pipe',
    })
    await client.connect(transport)
  })

  afterAll(async () => {
    await client?.close()
  })

  const remove = async (path: string) =>
    (await client.callTool({ name: 'remove_background', arguments: { path, options: {} } })) as CallToolResult & {
      structuredContent?: Record<string, unknown>
    }

  it('refuses a file that is not an image from its first bytes, saying why, and sends the API nothing', async () => {
    const result = await remove(files.text)
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toMatchObject({
      code: 'unsupported_media',
      status: 415,
      field: 'path',
      detail: 'Expected a JPEG, PNG, WebP, AVIF, HEIC or HEIF image',
    })
    expect(result.content[0]).toEqual({
      type: 'text',
      text: 'unsupported_media: Expected a JPEG, PNG, WebP, AVIF, HEIC or HEIF image',
    })
    expect(api.seen.filter((r) => r.path !== '/mcp' || r.body.includes('tools/call'))).toEqual([])
  })

  it('refuses an image over 25 megapixels by its header, in the API’s words, uploading nothing', async () => {
    const result = await remove(files.huge)
    expect(result.structuredContent).toMatchObject({
      code: 'image_too_large',
      field: 'path',
      detail: checkDimensions(WIDE, TALL)?.message,
    })
    expect(uploads()).toEqual([])
  })

  it('uploads an image the API would take and calls the tool with its uploadId', async () => {
    const result = await remove(files.photo)
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ uploadId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(uploads().map((r) => r.method)).toEqual(['POST', 'PUT', 'POST'])
  })
})
