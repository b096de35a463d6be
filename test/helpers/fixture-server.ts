/**
 * The test world outside the Worker, on 127.0.0.1 only: image files to fetch by `sourceUrl`,
 * redirects, a source that never answers (`/never-answers`), the switch of the inference proxy, the inference server's log
 * lines (`GET /control/inference/logs`), webhook receivers, and `POST /inspect` to read
 * what the API returned (file-inspector.ts). (The SSRF guard's
 * DNS-over-HTTPS stand-in is its own server: doh-server.ts.)
 *
 * Receivers: `POST /receiver/<name>` records the method, headers and raw body, and answers with the
 * next scripted response (200 "ok" when the script is empty). `POST /receiver/<name>/script` with a
 * JSON array of `{status, headers?, body?, delayMs?, drop?}` replaces the script (and clears the log;
 * `drop` closes the connection instead of answering);
 * `GET /receiver/<name>/log` returns what was received, oldest first.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { inspectFile } from './file-inspector'
import type { InferenceProxy, ProxyMode } from './inference-proxy'

const FIXTURES = new URL('../fixtures/', import.meta.url)
/** The inference server's photos (coffee, cat, rocket…), served too rather than copied. */
const PHOTOS = new URL('../../inference-server/test/fixtures/', import.meta.url)

function readFixture(name: string): Buffer {
  try {
    return readFileSync(new URL(name, FIXTURES))
  } catch {
    return readFileSync(new URL(name, PHOTOS))
  }
}

export interface ReceivedRequest {
  method: string
  headers: Record<string, string>
  body: string
  receivedAt: number
}

export interface ScriptedResponse {
  status: number
  headers?: Record<string, string>
  body?: string
  delayMs?: number
  /** Close the connection without answering (a receiver that crashed mid-request). */
  drop?: boolean
}

const receivers = new Map<string, { log: ReceivedRequest[]; script: ScriptedResponse[] }>()

function receiver(name: string) {
  let r = receivers.get(name)
  if (!r) {
    r = { log: [], script: [] }
    receivers.set(name, r)
  }
  return r
}

function readBytes(req: import('node:http').IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

const readBody = (req: import('node:http').IncomingMessage) => readBytes(req).then((b) => b.toString('utf8'))

let photo12: Promise<Buffer> | undefined
function twelveMegapixelPhoto(): Promise<Buffer> {
  photo12 ??= import('sharp').then(({ default: sharp }) =>
    sharp(readFileSync(new URL('astronaut.png', FIXTURES)))
      .resize(4000, 3000, { fit: 'fill' })
      .jpeg({ quality: 85 })
      .toBuffer(),
  )
  return photo12
}

export function startFixtureServer(
  port: number,
  proxy: InferenceProxy,
  inferenceLog: () => string[] = () => [],
): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`)
    if (url.pathname === '/files/garment-shirt.png') {
      // The try-on tests' made T-shirt (inference-server/test/garments.ts), drawn at request time.
      void import('../../inference-server/test/garments').then(async ({ makeTshirt }) => {
        const bytes = await makeTshirt()
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': bytes.length })
        res.end(bytes)
      })
      return
    }
    if (url.pathname.startsWith('/files/')) {
      const name = url.pathname.slice('/files/'.length).replace(/[^a-z0-9._-]/gi, '')
      try {
        const bytes = readFixture(name)
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length })
        return res.end(bytes)
      } catch {
        res.writeHead(404)
        return res.end()
      }
    }
    const subject = /^\/generated\/subject-(plain|faded)\.png$/.exec(url.pathname)
    if (subject) {
      // The confidence tests' made photos (inference-server/test/made-subjects.ts), drawn at request time.
      void import('../../inference-server/test/made-subjects').then(async ({ madeSubject }) => {
        const bytes = await madeSubject(subject[1] as 'plain' | 'faded')
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': bytes.length })
        res.end(bytes)
      })
      return
    }
    if (url.pathname === '/generated/photo-12mp.jpg') {
      // A 12 MP photo made from a fixture at request time, so none is committed.
      void twelveMegapixelPhoto().then((bytes) => {
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': bytes.length })
        res.end(bytes)
      })
      return
    }
    if (url.pathname === '/inspect' && req.method === 'POST') {
      void readBytes(req)
        .then((bytes) => inspectFile(url.searchParams.get('as') ?? 'image', bytes, url.searchParams.has('pixels')))
        .then(
          (report) => {
            res.writeHead(200, { 'content-type': 'application/json' })
            res.end(JSON.stringify(report))
          },
          (err: unknown) => {
            res.writeHead(422, { 'content-type': 'text/plain' })
            res.end(String(err))
          },
        )
      return
    }
    if (url.pathname === '/text.png') {
      res.writeHead(200, { 'content-type': 'image/png' })
      return res.end('this is not an image, whatever its name says\n')
    }
    if (url.pathname === '/never-answers') {
      // Takes the request and sends nothing, ever: the `sourceUrl` time bound's case. The
      // connection stays open until the teardown's closeAllConnections.
      return
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' })
      return res.end()
    }
    const recv = /^\/receiver\/([a-z0-9-]+)(\/script|\/log)?$/i.exec(url.pathname)
    if (recv) {
      const r = receiver(recv[1])
      if (recv[2] === '/log') {
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end(JSON.stringify(r.log))
      }
      void readBody(req).then(async (body) => {
        if (recv[2] === '/script') {
          r.script = JSON.parse(body || '[]') as ScriptedResponse[]
          r.log = []
          res.writeHead(204)
          return res.end()
        }
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
        )
        r.log.push({ method: req.method ?? '', headers, body, receivedAt: Date.now() })
        const next = r.script.shift() ?? { status: 200, body: 'ok' }
        if (next.delayMs) await new Promise((done) => setTimeout(done, next.delayMs))
        if (next.drop) return req.socket.destroy()
        res.writeHead(next.status, next.headers ?? {})
        res.end(next.body ?? '')
      })
      return
    }
    if (url.pathname === '/control/inference/logs') {
      // The inference server's recent stdout lines (its JSON logs), oldest first.
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ lines: inferenceLog() }))
    }
    if (url.pathname === '/control/inference/release' && req.method === 'POST') {
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ released: proxy.releaseHeld() }))
    }
    if (url.pathname === '/control/inference') {
      // POST switches the proxy's mode (and resets its counters); GET reads them.
      if (req.method === 'POST') proxy.setMode((url.searchParams.get('mode') ?? 'normal') as ProxyMode)
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify(proxy.stats()))
    }
    res.writeHead(404)
    res.end()
  })
  // Drawn now, while the rest of the test world starts: a `sourceUrl` of it must arrive well within
  // the tests' short SOURCE_FETCH_TIMEOUT_MS even on a busy machine.
  void twelveMegapixelPhoto()
  // Idle connections stay open until the client (workerd's pool) closes them: one Node closed after
  // its 5 s keep-alive could be taken up at that instant (a CI run: "Network connection lost").
  // Not `maxRequestsPerSocket`: Node answers 503 to a request sent on a socket past its limit.
  server.keepAliveTimeout = 0
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)))
}
