/**
 * A real HTTP proxy in front of the real inference server, used by the Worker tests to make the
 * inference server unreachable, saturated, or die in the middle of a removal, on demand.
 */
import { createServer, request, type Server } from 'node:http'

export type ProxyMode = 'normal' | 'down' | 'die-on-remove' | 'saturated'

export interface InferenceProxy {
  server: Server
  mode: ProxyMode
  /** Removal requests that reached the proxy, whatever happened to them. */
  removeCalls: number
}

export function startInferenceProxy(port: number, upstreamPort: number): Promise<InferenceProxy> {
  const proxy: InferenceProxy = { server: undefined as unknown as Server, mode: 'normal', removeCalls: 0 }
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
        up.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  return new Promise((resolve) => proxy.server.listen(port, '127.0.0.1', () => resolve(proxy)))
}
