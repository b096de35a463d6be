/**
 * A real HTTP proxy in front of the real inference server, used by the Worker tests to make the
 * inference server unreachable, saturated, or die in the middle of a removal, on demand.
 */
import { createServer, request, type Server } from 'node:http'

export type ProxyMode = 'normal' | 'down' | 'die-on-remove' | 'saturated' | 'hold-output'

/** Where an answer's first output frame begins (docs/inference-protocol.md). */
const OUTPUT_FRAME = Buffer.from('{"type":"output"')

export interface InferenceProxy {
  server: Server
  mode: ProxyMode
  /** Removal requests that reached the proxy, whatever happened to them. */
  removeCalls: number
  /**
   * In `hold-output` mode, answers whose frames before the first output were forwarded and whose
   * output and end are held back until `releaseHeld()`: the inference call is still in flight.
   */
  held: Array<() => void>
}

/** Forwards an answer's frames up to its first output, and the rest only when released. */
function holdAtOutput(proxy: InferenceProxy, up: NodeJS.ReadableStream, res: import('node:http').ServerResponse) {
  let pending = Buffer.alloc(0)
  let holding = false
  let ended = false
  let released = false
  const flushAll = () => {
    res.write(pending)
    pending = Buffer.alloc(0)
    if (ended) res.end()
  }
  up.on('data', (chunk: Buffer) => {
    if (released) return void res.write(chunk)
    pending = Buffer.concat([pending, chunk])
    if (holding) return
    const at = pending.indexOf(OUTPUT_FRAME)
    if (at < 0) {
      // Keep a marker's length back in case it is split across chunks.
      const safe = Math.max(0, pending.length - OUTPUT_FRAME.length)
      res.write(pending.subarray(0, safe))
      pending = pending.subarray(safe)
      return
    }
    res.write(pending.subarray(0, at))
    pending = pending.subarray(at)
    holding = true
    proxy.held.push(() => {
      released = true
      flushAll()
    })
  })
  up.on('end', () => {
    ended = true
    if (released || !holding) flushAll()
  })
}

export function startInferenceProxy(port: number, upstreamPort: number): Promise<InferenceProxy> {
  const proxy: InferenceProxy = { server: undefined as unknown as Server, mode: 'normal', removeCalls: 0, held: [] }
  proxy.server = createServer((req, res) => {
    const isRemove = req.url?.startsWith('/v1/remove') ?? false
    if (isRemove) proxy.removeCalls += 1
    if (proxy.mode === 'down') return req.socket.destroy()
    if (proxy.mode === 'die-on-remove' && isRemove) {
      // Read part of the upload, then vanish the way a crashed process does.
      req.once('data', () => req.socket.destroy())
      req.once('end', () => req.socket.destroy())
      return
    }
    if (proxy.mode === 'saturated' && (isRemove || req.url === '/health/ready')) {
      req.resume()
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
      const body = isRemove
        ? { code: 'processor_unavailable', message: 'saturated', retryable: true }
        : { status: 'saturated', running: 1, queued: 8 }
      return res.end(JSON.stringify(body))
    }
    const upstream = request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        if (proxy.mode === 'hold-output' && isRemove && up.statusCode === 200) return holdAtOutput(proxy, up, res)
        up.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  return new Promise((resolve) => proxy.server.listen(port, '127.0.0.1', () => resolve(proxy)))
}
