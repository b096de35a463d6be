/**
 * `npm start` end to end, against the real model: upload → complete → removal (JSON, multipart,
 * sourceUrl from a local server allowed by SSRF_ALLOWLIST), the signed result URL fetched without
 * the key, the SSRF guard resolving names through DNS_RESOLVER_URL (a DNS-over-HTTPS server on
 * 127.0.0.1), then a clean stop on SIGTERM.
 *
 * It runs on free ports with its own local D1/R2/Durable Object state (LOCAL_STATE_DIR in a
 * temporary directory), so a developer's `.wrangler/state` or a running `npm start` do not matter.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDohServer } from '../helpers/doh-server'
import { processesUsing } from '../helpers/local-stack'
import { freePort } from '../helpers/ports.mjs'

// sharp from the inference server's dependencies (the root package does not depend on it).
const sharp = createRequire(new URL('../../inference-server/package.json', import.meta.url))(
  'sharp',
) as typeof import('sharp')

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PNG = readFileSync(new URL('../fixtures/astronaut.png', import.meta.url))
const OPTIONS = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
/** A point on the astronaut's face (her nose is near 224,120 in the 512×512 photo) and the corner. */
const FACE = { x: 224, y: 120 }
const CORNER = { x: 5, y: 5 }
const START_TIMEOUT_MS = 400_000
/** One removal through the real model: seconds here; generous, for a machine four times slower and busy. */
const JOB_TIMEOUT_MS = 90_000
const TERMINAL = ['succeeded', 'failed', 'canceled']

let edgePort: number
let inferencePort: number
let stateDir: string
let start: ChildProcess
let startExit: Promise<number | null>
let output = ''
let baseUrl: string
let apiKey: string
let fixtureServer: Server
let fixtureOrigin: string
let dohServer: Server

const tail = () => output.split('\n').slice(-40).join('\n')

function waitForLines(): Promise<{ baseUrl: string; apiKey: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start printed no Base URL / API key in time:\n${tail()}`)),
      START_TIMEOUT_MS,
    )
    const check = () => {
      const base = /^Base URL: (http\S+)$/m.exec(output)
      const key = /^API key: (sk_live_\S+)$/m.exec(output)
      if (base && key) {
        clearTimeout(timer)
        resolve({ baseUrl: base[1], apiKey: key[1] })
      }
    }
    start.stdout!.on('data', check)
    start.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`npm start exited early with ${code}:\n${tail()}`))
    })
  })
}

function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  headers.set('Authorization', `Bearer ${apiKey}`)
  return fetch(new URL(path, baseUrl), { ...init, headers })
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

/** The job succeeded; its result URL (relative, signed) works without the key. */
async function expectCutout(res: Response): Promise<void> {
  const job = await finished(res)
  expect(job.status, JSON.stringify(job)).toBe('succeeded')
  const url = job.result?.url ?? ''
  expect(url.startsWith('/'), JSON.stringify(job)).toBe(true)

  const download = await fetch(new URL(url, baseUrl)) // no Authorization header
  expect(download.status).toBe(200)
  expect(download.headers.get('content-type')).toBe('image/png')
  const bytes = Buffer.from(await download.arrayBuffer())
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

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(async () => {
  edgePort = await freePort()
  inferencePort = await freePort()
  stateDir = mkdtempSync(join(tmpdir(), 'cutout-e2e-'))

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
  const dohPort = await freePort()
  dohServer = await startDohServer(dohPort)

  start = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(edgePort),
      INFERENCE_PORT: String(inferencePort),
      LOCAL_STATE_DIR: stateDir,
      // The guard asks this server, never wrangler.toml's public resolver.
      DNS_RESOLVER_URL: `http://127.0.0.1:${dohPort}/dns-query`,
      WRANGLER_SEND_METRICS: 'false',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so afterAll can clean up whatever happens
  })
  startExit = new Promise((resolve) => start.once('exit', (code) => resolve(code)))
  start.stdout!.on('data', (d) => (output += d))
  start.stderr!.on('data', (d) => (output += d))
  ;({ baseUrl, apiKey } = await waitForLines())
})

afterAll(async () => {
  if (start && start.exitCode === null && start.signalCode === null) {
    try {
      process.kill(-start.pid!, 'SIGTERM') // reaches scripts/start.ts, which stops both servers
    } catch {
      // already gone
    }
    await Promise.race([startExit, sleep(20_000)])
  }
  await new Promise((resolve) => fixtureServer?.close(resolve))
  await new Promise((resolve) => dohServer?.close(resolve))
  for (const pid of stateDir ? processesUsing(stateDir) : []) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  }
  if (stateDir) rmSync(stateDir, { recursive: true, force: true })
})

describe('npm start (local mode)', () => {
  it('prints the base URL and a development API key', () => {
    expect(baseUrl).toBe(`http://127.0.0.1:${edgePort}`)
    expect(apiKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/)
  })

  it('is ready: D1 and the inference server', async () => {
    const res = await fetch(new URL('/health/ready', baseUrl))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ready' })
  })

  it('removes the background of an upload (PUT to uploadUrl, complete, Prefer: wait=8)', async () => {
    const created = await api('/v1/uploads', { method: 'POST' })
    expect(created.status).toBe(201)
    const upload = (await created.json()) as { id: string; uploadUrl: string }
    expect(upload.uploadUrl.startsWith('/')).toBe(true)

    const put = await api(upload.uploadUrl, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: PNG })
    expect(put.status, await put.text()).toBe(204)

    const completed = await api(`/v1/uploads/${upload.id}/complete`, { method: 'POST' })
    const done = await completed.json()
    expect(completed.status, JSON.stringify(done)).toBe(200)
    expect(done).toMatchObject({ width: 512, height: 512, mimeType: 'image/png' })

    await expectCutout(await removal(JSON.stringify({ uploadId: upload.id, options: OPTIONS }), 'application/json'))
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

  it('stops both servers on SIGTERM and exits', async () => {
    expect(await portOpen(edgePort)).toBe(true)
    expect(await portOpen(inferencePort)).toBe(true)
    const stoppedAt = Date.now()
    start.kill('SIGTERM') // the npm process itself, as a supervisor would
    const deadline = stoppedAt + 15_000
    while (Date.now() < deadline && !/^\[start\] stopped$/m.test(output)) await sleep(200)
    expect(output, tail()).toMatch(/^\[start\] stopped$/m)
    await Promise.race([startExit, sleep(Math.max(0, deadline - Date.now()))])
    expect(start.exitCode !== null || start.signalCode !== null).toBe(true)
    expect(Date.now() - stoppedAt).toBeLessThan(15_000)
    expect(await portOpen(edgePort)).toBe(false)
    expect(await portOpen(inferencePort)).toBe(false)
    expect(processesUsing(stateDir)).toEqual([])
  })
})
