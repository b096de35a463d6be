/**
 * @module
 * A DevTools client of our own on `wrangler dev`'s `--inspector-port` that keeps network inspection
 * off; the benchmarks (bench/lib/stack.ts) also read the isolate's heap through it (`send`).
 *
 * Why it was written (issue 30 item 1): wrangler 4.86 (the newest on Node 20) sent `Network.enable`
 * to the Worker's runtime whether or not DevTools was attached; workerd then reported every 4 KiB of
 * a subrequest's response body as a `Network.dataReceived` event, which the proxy relayed to
 * wrangler's Node as an HTTP request of its own: a 100 MB result was some 25,000 concurrent
 * loopback connections, and the stack hung. workers-sdk fixed it (pull request 14243, issue 14191:
 * network inspection only while DevTools is attached), and since wrangler 4.164 (issue 45)
 * `npm start` runs without this guard. It sends `Network.disable` when it connects and again whenever
 * the runtime is reconnected, and drains what the proxy forwards. The proxy admits one DevTools
 * client, so while this one holds it Chrome DevTools cannot attach.
 */

export interface InspectorGuard {
  /** Sends a DevTools command to the Worker's runtime; resolves with its result. */
  send<T>(method: string, params?: object): Promise<T>
  /** Disconnects for good. */
  close(): void
}

export interface InspectorGuardOptions {
  /** Told once per connection loss, and why. */
  log?: (message: string) => void
  /** Wait between attempts to (re)connect. */
  retryMs?: number
}

interface Message {
  id?: number
  method?: string
  result?: unknown
  error?: { message?: string }
}

/** What resets the runtime connection: the proxy tells DevTools this before it enables the network again. */
const RECONNECTED = 'Runtime.executionContextsCleared'

/**
 * Connects to wrangler's inspector on 127.0.0.1:`port` and keeps network inspection off until
 * `close()`. Resolves once the first `Network.disable` was acknowledged.
 */
export async function guardInspector(port: number, options: InspectorGuardOptions = {}): Promise<InspectorGuard> {
  if (typeof WebSocket === 'undefined') {
    throw new Error('Keeping wrangler’s network inspection off needs a WebSocket client (Node 22 or newer)')
  }
  const retryMs = options.retryMs ?? 1000
  let socket: WebSocket | undefined
  let closed = false
  let next = 0
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()

  const send = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve, reject) => {
      if (!socket || socket.readyState !== WebSocket.OPEN) return reject(new Error('The inspector is not connected'))
      const id = ++next
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      socket.send(JSON.stringify({ id, method, params }))
    })
  // On a reconnect the proxy also enables the debugger for the DevTools client it thinks is there:
  // this one sets no breakpoints, so it is turned off too.
  const networkOff = () => Promise.all([send('Network.disable'), send('Debugger.disable')]).catch(() => undefined)

  let connected = false
  const connect = () =>
    new Promise<void>((resolve, reject) => {
      // The proxy admits DevTools from loopback origins only; Node's WebSocket takes headers as an
      // extension of the standard constructor.
      const init = { headers: { origin: 'http://127.0.0.1' } } as unknown as string[]
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, init)
      socket = ws
      let opened = false
      ws.addEventListener(
        'open',
        () =>
          void networkOff().then(() => {
            if (connected) options.log?.("reconnected to wrangler's inspector; network inspection is off again")
            connected = true
            opened = true
            resolve()
          }),
        { once: true },
      )
      ws.addEventListener('message', (event) => {
        const message = JSON.parse(String(event.data)) as Message
        if (message.method === RECONNECTED) void networkOff()
        const waiter = message.id === undefined ? undefined : pending.get(message.id)
        if (!waiter) return
        pending.delete(message.id!)
        if (message.error) waiter.reject(new Error(message.error.message ?? 'DevTools command failed'))
        else waiter.resolve(message.result)
      })
      ws.addEventListener('close', (event) => {
        for (const waiter of pending.values()) waiter.reject(new Error('The inspector connection closed'))
        pending.clear()
        reject(new Error(`wrangler's inspector closed the connection (${event.code} ${event.reason})`))
        // Only a guard that was in place keeps trying (wrangler restarting its proxy, a reload).
        if (closed || !connected) return
        if (opened)
          options.log?.(`wrangler's inspector connection closed (${event.code} ${event.reason}); reconnecting`)
        setTimeout(() => {
          if (!closed) void connect().catch(() => undefined)
        }, retryMs)
      })
    })

  await connect()
  return {
    send,
    close() {
      closed = true
      socket?.close()
    },
  }
}
