/**
 * `npm start` end to end, against the real model: upload → complete → removal (JSON, multipart,
 * sourceUrl from a local server allowed by SSRF_ALLOWLIST), the signed result URL fetched without
 * the key, every input format of SPEC.md §8 through the upload flow, what each removal option does
 * to the result's pixels, the SSRF guard resolving names through DNS_RESOLVER_URL (a DNS-over-HTTPS server on
 * 127.0.0.1). A clean stop on SIGTERM is test/e2e/faults.test.ts's, the last file on the same stack.
 *
 * The stack is the stage's one `npm start` (test/helpers/e2e-stack.ts): free ports, its own local
 * D1/R2/Durable Object state (LOCAL_STATE_DIR in a temporary directory), so a developer's
 * `.wrangler/state` or a running `npm start` do not matter.
 */
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorPages } from '../../scripts/lib/error-pages'
import { TERMINAL_STATUSES } from '../../src/contract/stages'
import { e2eStack } from '../helpers/e2e-stack'

// sharp from the inference server's dependencies (the root package does not depend on it).
const sharp = createRequire(new URL('../../inference-server/package.json', import.meta.url))(
  'sharp',
) as typeof import('sharp').default

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PNG = readFileSync(new URL('../fixtures/astronaut.png', import.meta.url))
/**
 * astronaut.png re-encoded in each other input format of SPEC.md §8 (the inference server's
 * fixtures; see their README): all 512×512 with no EXIF orientation, a few tens of kB each.
 */
const FORMAT_FIXTURES = new URL('../../inference-server/test/fixtures/', import.meta.url)
const FORMATS = [
  { file: 'small.jpg', mimeType: 'image/jpeg' },
  { file: 'small.webp', mimeType: 'image/webp' },
  { file: 'small.avif', mimeType: 'image/avif' },
  { file: 'small.heic', mimeType: 'image/heic' },
  // small.heic with the generic HEIF major brand `mif1` (its compatible brands still list heic).
  { file: 'small.heif', mimeType: 'image/heif' },
] as const
/**
 * `fast`: what this file shows (the ways in, the formats, what each alpha and output option does to
 * the pixels) is the same at every level, and `fast` runs the model at 704×640, not 1024², about
 * 2.5× less work. The default level, `balanced`, goes through `npm start` in the fault tests and
 * the clients' (the SDK's, the Python client's, the page's).
 */
const OPTIONS = { quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
/** A point on the astronaut's face (her nose is near 224,120 in the 512×512 photo) and the corner. */
const FACE = { x: 224, y: 120 }
const CORNER = { x: 5, y: 5 }
/** One removal through the real model: seconds here; generous, for a machine four times slower and busy. */
const JOB_TIMEOUT_MS = 90_000
const TERMINAL: readonly string[] = TERMINAL_STATUSES

let baseUrl: string
let apiKey: string
let fixtureServer: Server
let fixtureOrigin: string

function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  headers.set('Authorization', `Bearer ${apiKey}`)
  return fetch(new URL(path, baseUrl), { ...init, headers })
}

type Upload = { id: string; status: string; uploadUrl: string; width?: number; height?: number; mimeType?: string }

/**
 * Reserves an upload, PUTs the bytes to its uploadUrl and completes it. The completion is returned
 * unchecked, so that a caller trying several formats can report every one that fails.
 */
async function upload(bytes: Buffer, contentType: string): Promise<{ status: number; upload: Upload }> {
  const created = await api('/v1/uploads', { method: 'POST' })
  expect(created.status).toBe(201)
  const reserved = (await created.json()) as Upload
  expect(reserved.uploadUrl.startsWith('/')).toBe(true)

  const put = await api(reserved.uploadUrl, { method: 'PUT', headers: { 'Content-Type': contentType }, body: bytes })
  expect(put.status, `${contentType}: ${await put.text()}`).toBe(204)

  const completed = await api(`/v1/uploads/${reserved.id}/complete`, { method: 'POST' })
  return { status: completed.status, upload: (await completed.json()) as Upload }
}

function removal(body: RequestInit['body'], contentType?: string): Promise<Response> {
  const headers: Record<string, string> = { 'Idempotency-Key': randomUUID(), Prefer: 'wait=8' }
  if (contentType) headers['Content-Type'] = contentType
  return api('/v1/removals', { method: 'POST', headers, body })
}

/**
 * The job a `Prefer: wait=8` removal ends as. The wait is a bound, not a promise: 200 only with
 * the ended job, 202 only with one still running, which is then polled (within the local rate
 * limit) until it ends.
 */
async function finished(res: Response) {
  const text = await res.text()
  expect([200, 202], text).toContain(res.status)
  expect(res.headers.get('preference-applied')).toBe('wait=8')
  let job = JSON.parse(text) as { id: string; status: string; result: { url: string } | null }
  expect(TERMINAL.includes(job.status), `${res.status} with a ${job.status} job`).toBe(res.status === 200)
  const deadline = Date.now() + JOB_TIMEOUT_MS
  while (!TERMINAL.includes(job.status)) {
    if (Date.now() > deadline) throw new Error(`job ${job.id} still ${job.status} after ${JOB_TIMEOUT_MS} ms`)
    await sleep(1000)
    const polled = await api(`/v1/jobs/${job.id}`)
    expect(polled.status).toBe(200)
    job = (await polled.json()) as typeof job
  }
  return job
}

/** The job succeeded; its result URL (relative, signed) works without the key and gives a PNG. */
async function resultPng(res: Response): Promise<Buffer> {
  const job = await finished(res)
  expect(job.status, JSON.stringify(job)).toBe('succeeded')
  const url = job.result?.url ?? ''
  expect(url.startsWith('/'), JSON.stringify(job)).toBe(true)

  const download = await fetch(new URL(url, baseUrl)) // no Authorization header
  expect(download.status).toBe(200)
  expect(download.headers.get('content-type')).toBe('image/png')
  return Buffer.from(await download.arrayBuffer())
}

/** The result is the astronaut's 512×512 cutout: her face opaque, the corner transparent. */
async function expectCutout(res: Response): Promise<void> {
  const bytes = await resultPng(res)
  const meta = await sharp(bytes).metadata()
  expect(meta).toMatchObject({ format: 'png', width: 512, height: 512, channels: 4 })

  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true })
  expect(info.channels).toBe(4)
  const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3]
  const around = (p: { x: number; y: number }) => {
    const values: number[] = []
    for (let dy = -3; dy <= 3; dy++) for (let dx = -3; dx <= 3; dx++) values.push(alpha(p.x + dx, p.y + dy))
    return values
  }
  expect(Math.min(...around(FACE))).toBeGreaterThan(200)
  expect(alpha(CORNER.x, CORNER.y)).toBeLessThanOrEqual(5)
  expect(Math.max(...around(CORNER))).toBeLessThanOrEqual(5)
}

/** A mask result: a 512×512 PNG with one grey channel (SPEC.md §2: "grayscale PNG mask"), as its values. */
async function decodeMask(bytes: Buffer): Promise<Buffer> {
  expect(await sharp(bytes).metadata()).toMatchObject({ format: 'png', width: 512, height: 512, channels: 1 })
  // sharp would hand a grey PNG back as 3 raw channels (sRGB) unless kept grey.
  const { data, info } = await sharp(bytes).toColourspace('b-w').raw().toBuffer({ resolveWithObject: true })
  expect(info.channels).toBe(1)
  return data
}

const countDifferences = (a: Uint8Array, b: Uint8Array) => {
  expect(a.length).toBe(b.length)
  let n = 0
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++
  return n
}

/** Whether a 512-wide hard mask changes value within `radius` pixels of (x, y). */
function nearEdge(hard: Uint8Array, x: number, y: number, radius: number): boolean {
  const v = hard[y * 512 + x]
  for (let dy = -radius; dy <= radius; dy++) {
    for (let dx = -radius; dx <= radius; dx++) {
      const nx = x + dx
      const ny = y + dy
      if (nx >= 0 && ny >= 0 && nx < 512 && ny < 512 && hard[ny * 512 + nx] !== v) return true
    }
  }
  return false
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(async () => {
  ;({ baseUrl, apiKey } = e2eStack())
  fixtureServer = createServer((req, res) => {
    if (req.url === '/astronaut.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length })
      res.end(PNG)
    } else {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => fixtureServer.listen(0, '127.0.0.1', resolve))
  const address = fixtureServer.address()
  fixtureOrigin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
})

afterAll(async () => {
  await new Promise((resolve) => fixtureServer?.close(resolve))
})

/**
 * DESIGN.md §3 "Page security" on the path production serves the page on: wrangler.toml's
 * [assets] (web/dist and the `_headers` file scripts/build-web.ts writes there) before the Worker.
 * A page that may be framed lets another site overlay /device's Approve (clickjacking).
 */
describe('page security headers (npm start serving web/dist)', () => {
  const PAGE_HEADERS = {
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
  }
  /** The CSP's directives by name: `{ 'script-src': ["'self'"], … }`. */
  const directives = (csp: string) =>
    Object.fromEntries(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter(([name]) => name)
        .map(([name, ...values]) => [name.toLowerCase(), values]),
    )

  it.each([
    ['/', 'text/html'],
    ['/device', 'text/html'],
    ['/device?user_code=BCDF-GHJK', 'text/html'],
    ['/index.js', 'javascript'],
    ['/device.js', 'javascript'],
    ['/styles.css', 'text/css'],
  ])('%s: a CSP without inline script and framed by no one, X-Frame-Options DENY, nosniff', async (path, type) => {
    const res = await fetch(new URL(path, baseUrl))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain(type)
    expect(Object.fromEntries(Object.keys(PAGE_HEADERS).map((h) => [h, res.headers.get(h)]))).toEqual(PAGE_HEADERS)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).not.toMatch(/unsafe-(inline|eval|hashes)/)
    expect(directives(csp)).toMatchObject({
      'frame-ancestors': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'object-src': ["'none'"],
    })
    await res.body?.cancel()
  })

  it.each([
    ['/', '/index.js'],
    ['/device', '/device.js'],
    ['/catalog', '/catalog.js'],
    ['/try-on', '/try-on.js'],
  ])('%s has no inline script, style or handler for its CSP to block', async (path, script) => {
    const html = await (await fetch(new URL(path, baseUrl))).text()
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    expect(scripts.map(([, attrs, body]) => ({ src: /\bsrc="([^"]+)"/.exec(attrs)?.[1], body: body.trim() }))).toEqual([
      { src: script, body: '' },
    ])
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|javascript:/i)
  })

  /**
   * The path each file of web/dist is served at: `index.html` at `/`, any other page without its
   * `.html` (wrangler's auto-trailing-slash), every other file as itself. `_headers` is not served.
   */
  const servedPaths = (dir: string, prefix = ''): string[] =>
    readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
      const file = `${prefix}${entry.name}`
      if (entry.isDirectory()) return servedPaths(dir, `${file}/`)
      if (file === '_headers') return []
      if (file === 'index.html') return ['/']
      return [`/${file.endsWith('.html') ? file.slice(0, -'.html'.length) : file}`]
    })

  it('every page and asset in web/dist (each /errors/<code> page, /docs, new pages too) has them', async () => {
    const paths = servedPaths(join(ROOT, 'web', 'dist'))
    // The walk found the site, not an empty or half-built directory.
    const errorPaths = errorPages().map(([file]) => `/${file.slice(0, -'.html'.length)}`)
    expect(paths).toEqual(expect.arrayContaining(['/', '/device', '/docs', '/errors/asset-expired', ...errorPaths]))
    const missing: string[] = []
    for (const path of paths) {
      const res = await fetch(new URL(path, baseUrl), { redirect: 'manual' })
      await res.body?.cancel()
      const csp = directives(res.headers.get('content-security-policy') ?? '')
      // Only /docs may inline styles (its renderer injects them); script is 'self' everywhere.
      const styles = path === '/docs' ? ["'self'", "'unsafe-inline'"] : ["'self'"]
      const wrong = [
        res.status !== 200 && `status ${res.status}`,
        ...Object.entries(PAGE_HEADERS).map(([h, v]) => res.headers.get(h) !== v && `${h}: ${res.headers.get(h)}`),
        JSON.stringify(csp['script-src']) !== JSON.stringify(["'self'"]) && `script-src ${csp['script-src']}`,
        JSON.stringify(csp['style-src']) !== JSON.stringify(styles) && `style-src ${csp['style-src']}`,
        JSON.stringify(csp['frame-ancestors']) !== JSON.stringify(["'none'"]) &&
          `frame-ancestors ${csp['frame-ancestors']}`,
        JSON.stringify(csp['object-src']) !== JSON.stringify(["'none'"]) && `object-src ${csp['object-src']}`,
      ].filter(Boolean)
      if (wrong.length) missing.push(`${path}: ${wrong.join(', ')}`)
    }
    expect(missing).toEqual([])
  })

  it('the API answers nosniff, and the `_headers` file is not served', async () => {
    const usage = await api('/v1/usage')
    expect(usage.status).toBe(200)
    expect(usage.headers.get('x-content-type-options')).toBe('nosniff')
    await usage.body?.cancel()
    const file = await fetch(new URL('/_headers', baseUrl))
    expect(file.status).toBe(404)
    expect(file.headers.get('content-type')).toContain('application/problem+json')
    expect(file.headers.get('x-content-type-options')).toBe('nosniff')
    await file.body?.cancel()
  })
})

describe('npm start (local mode)', () => {
  it('prints the base URL and a development API key', () => {
    const { banner } = e2eStack()
    expect(banner).toMatch(/^Base URL: http:\/\/127\.0\.0\.1:\d+$/m)
    expect(banner).toContain(`Base URL: ${baseUrl}\n`)
    expect(banner).toContain(`API key: ${apiKey}\n`)
    expect(apiKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/)
  })

  it('is ready: D1 and the inference server', async () => {
    const res = await fetch(new URL('/health/ready', baseUrl))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ready' })
  })

  it('removes the background of an upload (PUT to uploadUrl, complete, Prefer: wait=8)', async () => {
    const { status, upload: done } = await upload(PNG, 'image/png')
    expect(status, JSON.stringify(done)).toBe(200)
    expect(done).toMatchObject({ status: 'ready', width: 512, height: 512, mimeType: 'image/png' })

    await expectCutout(await removal(JSON.stringify({ uploadId: done.id, options: OPTIONS }), 'application/json'))
  })

  it('removes the background of a multipart image', async () => {
    const form = new FormData()
    form.append('image', new Blob([PNG], { type: 'image/png' }), 'astronaut.png')
    form.append('options', JSON.stringify(OPTIONS))
    await expectCutout(await removal(form))
  })

  it('removes the background of a sourceUrl on 127.0.0.1 (allowed by SSRF_ALLOWLIST in local mode)', async () => {
    const body = JSON.stringify({ sourceUrl: `${fixtureOrigin}/astronaut.png`, options: OPTIONS })
    await expectCutout(await removal(body, 'application/json'))
  })

  // Completing an upload decodes it (SPEC.md §4 Uploads: "verified width, height, mimeType"), so
  // five formats cost no model run; one removal then shows a decoded HEIC reaches the model whole.
  it("accepts JPEG, WebP, AVIF, HEIC and HEIF uploads as ready with their type and size, and removes a HEIC upload's background", async () => {
    const completed: Record<string, unknown>[] = []
    const ids: Record<string, string> = {}
    for (const { file, mimeType } of FORMATS) {
      const { status, upload: done } = await upload(readFileSync(new URL(file, FORMAT_FIXTURES)), mimeType)
      const { width, height } = done
      completed.push({
        file,
        status,
        ...(status === 200 ? { ready: done.status, mimeType: done.mimeType, width, height } : { problem: done }),
      })
      ids[file] = done.id
    }
    // One comparison, so a failure lists every format at once.
    expect(completed).toEqual(
      FORMATS.map(({ file, mimeType }) => ({ file, status: 200, ready: 'ready', mimeType, width: 512, height: 512 })),
    )

    await expectCutout(
      await removal(JSON.stringify({ uploadId: ids['small.heic'], options: OPTIONS }), 'application/json'),
    )
  })

  // The fixtures are square and carry no orientation, so they cannot tell stored from upright
  // size: this JPEG is stored 320×200 with EXIF orientation 6 (rotate 90° clockwise to view).
  it('reports the upright size of an EXIF-rotated JPEG upload (stored 320×200, orientation 6: 200×320)', async () => {
    const rotated = await sharp(PNG)
      .resize(320, 200, { fit: 'fill' })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer()
    expect(await sharp(rotated).metadata()).toMatchObject({ width: 320, height: 200, orientation: 6 })

    const { status, upload: done } = await upload(rotated, 'image/jpeg')
    expect(status, JSON.stringify(done)).toBe(200)
    expect(done).toMatchObject({ status: 'ready', mimeType: 'image/jpeg', width: 200, height: 320 })
  })

  // SPEC.md §2 Removal options, on one upload of astronaut.png; every result is a PNG of the
  // photo's size, read back pixel by pixel. Each removal is a model run (seconds), so the raw
  // and binary masks are made once and shared by the tests that compare against them.
  describe('removal options change the result', () => {
    let uploadId: Promise<string> | undefined
    const astronaut = () =>
      (uploadId ??= upload(PNG, 'image/png').then(({ status, upload: done }) => {
        expect(status, JSON.stringify(done)).toBe(200)
        return done.id
      }))
    const remove = async (options: object) =>
      resultPng(await removal(JSON.stringify({ uploadId: await astronaut(), options }), 'application/json'))
    const mask = (alpha: object) => remove({ quality: OPTIONS.quality, alpha, output: 'mask' }).then(decodeMask)

    let raw: Promise<Buffer> | undefined
    const rawMask = () => (raw ??= mask({ mode: 'raw', feather: 0 }))
    let binary: Promise<Buffer> | undefined
    const binaryMask = () => (binary ??= mask({ mode: 'binary', threshold: 0.5, feather: 0 }))

    const at = (values: Buffer, p: { x: number; y: number }) => values[p.y * 512 + p.x]
    const count = (values: Buffer, keep: (v: number) => boolean) => values.filter(keep).length

    it('output mask, raw alpha: a one-channel grey 512×512 PNG of the subject, soft values on its edge', async () => {
      const values = await rawMask()
      expect(at(values, FACE)).toBeGreaterThan(200)
      expect(at(values, CORNER)).toBeLessThanOrEqual(5)
      // The model's own alpha: a raw mask that were already hard would make (b) below prove nothing.
      expect(count(values, (v) => v > 0 && v < 255)).toBeGreaterThan(0)
    })

    it('output mask, binary alpha at threshold 0.5: only 0 and 255, each pixel the raw mask cut at half', async () => {
      const values = await binaryMask()
      expect(count(values, (v) => v !== 0 && v !== 255)).toBe(0)
      // No 8-bit value is exactly half (127.5), so ≥ and > agree: 0..127 → 0, 128..255 → 255.
      const expected = (await rawMask()).map((v) => (v >= 128 ? 255 : 0))
      expect(countDifferences(values, expected)).toBe(0)
    })

    it('binary alpha with feather 2: the hard edge gets grey values, only within a few pixels of it', async () => {
      const hard = await binaryMask()
      const values = await mask({ mode: 'binary', threshold: 0.5, feather: 2 })
      expect(count(values, (v) => v > 0 && v < 255)).toBeGreaterThan(0)
      // A 2 px feather's blur (sigma 2/3, kernel cut at 1/1000) reaches under 3 px; away from the
      // edge the mask stays the binary one exactly. 4 px leaves room without allowing a wide blur.
      const far: number[] = []
      for (let i = 0; i < values.length; i++) {
        if (values[i] !== hard[i] && !nearEdge(hard, i % 512, Math.floor(i / 512), 4)) far.push(i)
      }
      expect(far.length, `first at ${far[0] % 512},${Math.floor(far[0] / 512)}`).toBe(0)
    })

    it("output cutout, raw alpha: RGBA whose alpha is the raw mask pixel for pixel, opaque pixels the photo's colour, edges decontaminated", async () => {
      const bytes = await remove(OPTIONS)
      expect(await sharp(bytes).metadata()).toMatchObject({ format: 'png', width: 512, height: 512, channels: 4 })
      const { data } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true })
      const alpha = Buffer.alloc(512 * 512)
      for (let i = 0; i < alpha.length; i++) alpha[i] = data[i * 4 + 3]
      expect(countDifferences(alpha, await rawMask())).toBe(0)

      // Every opaque pixel keeps the photo's colour; only the edge band (0 < alpha < 255) has its
      // colours decontaminated (issue 22: blur fusion at every level), and some of it must be.
      const photo = await sharp(PNG).removeAlpha().raw().toBuffer()
      let opaqueRecoloured = 0
      let edgeRecoloured = 0
      for (let i = 0; i < alpha.length; i++) {
        if (alpha[i] === 0) continue
        let changed = false
        for (let c = 0; c < 3; c++) if (data[i * 4 + c] !== photo[i * 3 + c]) changed = true
        if (changed && alpha[i] === 255) opaqueRecoloured++
        if (changed && alpha[i] < 255) edgeRecoloured++
      }
      expect(opaqueRecoloured).toBe(0)
      expect(edgeRecoloured).toBeGreaterThan(0)
    })
  })

  // wrangler dev has workerd's own fetch (the test pool's replacement is not there), so this is
  // the production resolver path as deployed. Nothing connects to public.example: registering
  // only checks the URL, the endpoint takes an event these tests never cause, and it is deleted.
  it('resolves names through DNS_RESOLVER_URL: a public name registers, a private one is 422', async () => {
    const register = (url: string) =>
      api('/v1/webhooks', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ url, events: ['image.export.completed.v1'] }),
      })
    const created = await register('https://public.example/hooks')
    const endpoint = (await created.json()) as { id: string }
    expect(created.status, JSON.stringify(endpoint)).toBe(201)
    const deleted = await api(`/v1/webhooks/${endpoint.id}`, { method: 'DELETE' })
    expect(deleted.status).toBeLessThan(300)

    const refused = await register('https://private.example/hooks')
    const problem = (await refused.json()) as Record<string, string>
    expect(refused.status, JSON.stringify(problem)).toBe(422)
    expect(problem).toMatchObject({ code: 'unsafe_url', field: 'url' })
    expect(problem.detail).toMatch(/private\.example resolves to 10\.0\.0\.5/)
  })
})
