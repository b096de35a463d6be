/**
 * A real HTTP proxy in front of the real inference server, used by the Worker tests to make the
 * inference server unreachable, saturated, die in the middle of a removal, or hold a removal in
 * flight until the Worker gives up on it, on demand.
 */
import { createServer, request, type Server, type ServerResponse } from 'node:http'

export type ProxyMode = 'normal' | 'down' | 'die-on-remove' | 'saturated' | 'hold-remove'

export interface ProxyStats {
  mode: ProxyMode
  /** Removal requests that reached the proxy, whatever happened to them. */
  removeCalls: number
  /** Readiness checks and removals answered "saturated" (503 + Retry-After). */
  saturatedAnswers: number
  /** Removals held unanswered ('hold-remove'). */
  heldCalls: number
  /** Held removals whose client went away before an answer: the Worker aborted the call. */
  abortedCalls: number
}

export interface InferenceProxy extends ProxyStats {
  server: Server
  /** Switches the mode and resets the counters; held removals are dropped. */
  setMode(mode: ProxyMode): void
  stats(): ProxyStats
}

export function startInferenceProxy(port: number, upstreamPort: number): Promise<InferenceProxy> {
  const held = new Set<ServerResponse>()
  const proxy: InferenceProxy = {
    server: undefined as unknown as Server,
    mode: 'normal',
    removeCalls: 0,
    saturatedAnswers: 0,
    heldCalls: 0,
    abortedCalls: 0,
    setMode(mode) {
      for (const res of held) res.destroy()
      held.clear()
      Object.assign(proxy, { mode, removeCalls: 0, saturatedAnswers: 0, heldCalls: 0, abortedCalls: 0 })
    },
    stats: () => ({
      mode: proxy.mode,
      removeCalls: proxy.removeCalls,
      saturatedAnswers: proxy.saturatedAnswers,
      heldCalls: proxy.heldCalls,
      abortedCalls: proxy.abortedCalls,
    }),
  }
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
    if (proxy.mode === 'hold-remove' && isRemove) {
      // Take the upload and answer nothing, like a server busy with a long run.
      proxy.heldCalls += 1
      held.add(res)
      req.resume()
      res.once('close', () => {
        if (held.delete(res) && !res.writableEnded) proxy.abortedCalls += 1
      })
      return
    }
    if (proxy.mode === 'saturated' && (isRemove || req.url === '/health/ready')) {
      proxy.saturatedAnswers += 1
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
