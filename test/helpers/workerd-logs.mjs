/**
 * Keeps workerd's expected log lines out of a Worker test run's output.
 *
 * @cloudflare/vitest-plugin starts workerd with structured logging and writes every line it
 * logs straight to this process's stdout or stderr (its `handleStructuredLogs`; the pool takes no
 * option to replace it, and Miniflare's `handleRuntimeStdio` is not passed through). A passing run
 * used to print dozens of them. The ones listed here are expected: the tests cause them on purpose,
 * or the runtime prints them whatever the tests do. Anything else workerd says is still printed,
 * and so is everything vitest prints (a failing test's error included), because only whole writes
 * that start like one of these lines are dropped.
 *
 * `TEST_RUNTIME_LOGS=all` prints them all again; a run that hid some says how many at the end.
 */

const EXPECTED = [
  // After each test file the pool closes its connection to that file's runtime.
  /^exception = workerd\/api\/web-socket\.c\+\+:\d+: disconnected: WebSocket peer disconnected/,
  // test/helpers/inference-proxy.ts drops inference connections on purpose ('down', 'die-on-remove'
  // in failures.test.ts). The Worker handles the failed fetch and the test checks what it made of
  // it; workerd still logs the broken socket (reset, closed early), sometimes as "uncaught", and
  // then the "Network connection lost" its fetch rejected with.
  /^(uncaught exception; )?exception = kj\/async-io(-unix)?\.c\+\+:\d+: disconnected: /,
  /^uncaught exception; source = Uncaught \(in promise\); stack = Error: Network connection lost\./,
  /^uncaught exception; exception = workerd\/jsg\/\S+: disconnected: jsg\.Error: Network connection lost\./,
  // The same dropped connections (and canceled jobs' aborted calls) cut the stream that carries a
  // request's parts to the inference server mid-upload.
  /^exception = workerd\/api\/streams\/internal\.c\+\+:\d+: disconnected: pump canceled/,
  // workerd's notes on alarm timing ("NOSENTRY": not reported as errors): an alarm that ran
  // later than scheduled, or a running handler whose alarm was set again meanwhile. A busy
  // machine makes them; neither is an error.
  /^NOSENTRY SQLite alarm (overdue, running despite AlarmManager mismatch|handler canceled with requestScheduledAlarm)/,
  // Not workerd's but Vite's, as it loads the MCP SDK into the pool: the package's source maps
  // name TypeScript sources it does not ship. Harmless (stack traces show the built JS instead).
  /^Sourcemap for "[^"]*\/node_modules\/@modelcontextprotocol\/sdk\/[^"]*" points to missing source files/,
]

/** workerd's native stack (addresses in its binary) after an exception line: dropped with that line. */
const NATIVE_STACK = /^stack:( \S+@[0-9a-f]+)+\s*$/

/** Installs the filter on this process's stdout and stderr (once, from the Worker vitest config). */
export function hideExpectedWorkerdLogs() {
  if (process.env.TEST_RUNTIME_LOGS === 'all') return
  let hidden = 0
  let droppedLast = false
  /** @param {NodeJS.WriteStream} stream */
  const filter = (stream) => {
    const write = stream.write.bind(stream)
    /** @type {(chunk: unknown, ...rest: unknown[]) => boolean} */
    const filtered = (chunk, ...rest) => {
      if (typeof chunk === 'string' || chunk instanceof Uint8Array) {
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
        const expected = EXPECTED.some((pattern) => pattern.test(text)) || (droppedLast && NATIVE_STACK.test(text))
        droppedLast = expected
        if (expected) {
          hidden += 1
          const done = rest.find((a) => typeof a === 'function')
          if (done) done()
          return true
        }
      }
      return write(/** @type {string} */ (chunk), .../** @type {[]} */ (rest))
    }
    stream.write = /** @type {typeof stream.write} */ (filtered)
  }
  filter(process.stdout)
  filter(process.stderr)
  process.once('exit', () => {
    if (hidden > 0) {
      process.stdout.write(
        `(${hidden} expected workerd log lines hidden: file teardown, connections the test proxy drops, late alarms; TEST_RUNTIME_LOGS=all shows them)\n`,
      )
    }
  })
}
