/**
 * A real HTTP proxy in front of the real inference server, used by the Worker tests to make the
 * inference server unreachable, saturated, die in the middle of a removal, hold a removal in
 * flight until the Worker gives up on it, freeze (before or during a removal), report that its
 * work failed, or go to a slower server, on demand.
 */
import { createServer, request, type Server, type ServerResponse } from 'node:http'
import { encodeFrame, FRAMES_CONTENT_TYPE } from '../../src/contract/frames'
import type { ProxyMode } from './proxy-modes'

export type { ProxyMode } from './proxy-modes'

/** Where an answer's first output frame begins (docs/inference-protocol.md). */
const OUTPUT_FRAME = Buffer.from('{"type":"output"')

export interface ProxyStats {
  mode: ProxyMode
  /** Removal requests that reached the proxy, whatever happened to them. */
  removeCalls: number
  /** Readiness checks (`GET /health/ready`) that reached the proxy, whatever happened to them. */
  readyChecks: number
  /** Readiness checks and removals answered "saturated" (503 + Retry-After). */
  saturatedAnswers: number
  /** Removals held unanswered ('hold-remove'). */
  heldCalls: number
  /** Requests of any kind taken and never answered ('frozen', like a SIGSTOPped server). */
  frozenRequests: number
  /** Held removals whose client went away before an answer: the Worker aborted the call. */
  abortedCalls: number
  /**
   * 'hold-output': answers forwarded up to their first output frame whose output and end wait for
   * `releaseHeld()`; until then the Worker's inference call is still in flight.
   */
  held: number
}

export interface InferenceProxy extends ProxyStats {
  server: Server
  /** Switches the mode and resets the counters; held removals are dropped. */
  setMode(mode: ProxyMode): void
  stats(): ProxyStats
  /** Lets every answer held at its output go on; returns how many there were. */
  releaseHeld(): number
}

/** Forwards an answer's frames up to its first output, and the rest only once released. */
function holdAtOutput(up: NodeJS.ReadableStream, res: ServerResponse, hold: (release: () => void) => void) {
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
    hold(() => {
      released = true
      flushAll()
    })
  })
  up.on('end', () => {
    ended = true
    if (released || !holding) flushAll()
  })
}

/** `upstream.port`: the server every mode forwards to but 'slow', which forwards to `upstream.slowPort`. */
export function startInferenceProxy(
  port: number,
  upstream: { port: number; slowPort: number },
): Promise<InferenceProxy> {
  const held = new Set<ServerResponse>()
  let heldAtOutput: Array<() => void> = []
  const proxy: InferenceProxy = {
    server: undefined as unknown as Server,
    mode: 'normal',
    removeCalls: 0,
    readyChecks: 0,
    saturatedAnswers: 0,
    heldCalls: 0,
    frozenRequests: 0,
    abortedCalls: 0,
    setMode(mode) {
      for (const res of held) res.destroy()
      held.clear()
      proxy.releaseHeld()
      Object.assign(proxy, {
        mode,
        removeCalls: 0,
        readyChecks: 0,
        saturatedAnswers: 0,
        heldCalls: 0,
        frozenRequests: 0,
        abortedCalls: 0,
      })
    },
    stats: () => ({
      mode: proxy.mode,
      removeCalls: proxy.removeCalls,
      readyChecks: proxy.readyChecks,
      saturatedAnswers: proxy.saturatedAnswers,
      heldCalls: proxy.heldCalls,
      frozenRequests: proxy.frozenRequests,
      abortedCalls: proxy.abortedCalls,
      held: heldAtOutput.length,
    }),
    releaseHeld() {
      const releases = heldAtOutput
      heldAtOutput = []
      for (const release of releases) release()
      return releases.length
    },
    held: 0,
  }
  proxy.server = createServer((req, res) => {
    const isRemove = req.url?.startsWith('/v1/remove') ?? false
    // 'hold-output' gates refinements too: with the stub segmenter they end in milliseconds, so a
    // test that needs them still in flight holds them rather than hoping the model is slow.
    const holdsOutput = isRemove || (req.url?.startsWith('/v1/refine') ?? false)
    if (isRemove) proxy.removeCalls += 1
    if (req.url === '/health/ready') proxy.readyChecks += 1
    if (proxy.mode === 'down') return req.socket.destroy()
    if (proxy.mode === 'die-on-remove' && isRemove) {
      // Read part of the upload, then vanish the way a crashed process does.
      req.once('data', () => req.socket.destroy())
      req.once('end', () => req.socket.destroy())
      return
    }
    // Like a server SIGSTOPped while its model runs: ready until a removal arrives, then frozen
    // for that removal and everything after it.
    if (proxy.mode === 'freeze-on-remove' && isRemove) proxy.mode = 'frozen'
    if (proxy.mode === 'freeze-on-export' && req.url?.startsWith('/v1/export')) proxy.mode = 'frozen'
    if (proxy.mode === 'frozen') {
      // The kernel still accepts connections for a stopped process; nothing ever answers.
      proxy.frozenRequests += 1
      held.add(res)
      res.once('close', () => held.delete(res))
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
    if (proxy.mode === 'fail-next-remove' && isRemove) {
      // What the server streams when its model or encoder throws mid-run (stream.ts): the stage it
      // reached, then an error frame that is not the caller's fault and not worth a retry. Only
      // this removal: the next one reaches the real server, so a retry would succeed.
      proxy.mode = 'normal'
      req.resume()
      res.writeHead(200, { 'content-type': FRAMES_CONTENT_TYPE })
      res.write(encodeFrame({ type: 'stage', stage: 'segmenting' }))
      const error = {
        code: 'processing_failed' as const,
        message: 'the model run failed (fail-next-remove)',
        retryable: false,
      }
      return res.end(encodeFrame({ type: 'error', ...error }))
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
    const to = proxy.mode === 'slow' ? upstream.slowPort : upstream.port
    const forwarded = request(
      { host: '127.0.0.1', port: to, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        if (proxy.mode === 'hold-output' && holdsOutput && up.statusCode === 200) {
          // A call still on its way to its output when the hold was lifted goes straight on: only
          // the mode at the moment of its output decides (else it would wait out its deadline).
          return holdAtOutput(up, res, (release) =>
            proxy.mode === 'hold-output' ? void heldAtOutput.push(release) : release(),
          )
        }
        up.pipe(res)
      },
    )
    forwarded.on('error', () => res.destroy())
    req.pipe(forwarded)
  })
  // Idle connections stay open until the client (workerd's pool) closes them: one Node closed after
  // its 5 s keep-alive could be taken up at that instant (a CI run: "Network connection lost").
  // Not `maxRequestsPerSocket`: Node answers 503 to a request sent on a socket past its limit.
  proxy.server.keepAliveTimeout = 0
  return new Promise((resolve) => proxy.server.listen(port, '127.0.0.1', () => resolve(proxy)))
}
