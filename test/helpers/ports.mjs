import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/**
 * Where ports the OS hands out for `listen(0)` and outgoing connections come from (Linux's
 * ip_local_port_range). A port asked of the OS that way and closed again can be handed to the next
 * process asking before the test's server binds it: the Worker stage starts a workerd per file,
 * each listening on ports the OS picks, while another stage's `npm start` is still coming up on the
 * port it was given (a CI run saw the page test reach a workerd on its stack's port). So test ports
 * come from below that range, where the OS never picks one by itself.
 */
function ephemeralLow() {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) && low > 12_000 ? low : undefined
  } catch {
    return undefined
  }
}

const LOW = ephemeralLow()
const given = new Set()

/** Whether `port` can be listened on at 127.0.0.1 now (it is closed again before this resolves). */
function listenable(port) {
  return new Promise((resolve) => {
    const srv = createServer()
    srv.unref()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })
}

/**
 * A free TCP port on 127.0.0.1 for a test's server: a random one of the 10 000 ports below the
 * OS's own range (see `ephemeralLow`), never one this process gave before; the OS's choice where
 * that range is unknown.
 */
export async function freePort() {
  if (LOW !== undefined) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = LOW - 10_000 + Math.floor(Math.random() * 10_000)
      if (given.has(port) || !(await listenable(port))) continue
      given.add(port)
      return port
    }
  }
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/** Fixed keys for tests only; `npm start` generates its own. */
export const TEST_SIGNING_KEYS = {
  inference: 'test-inference-signing-key-0123456789abcdef',
  result: 'test-result-signing-key-0123456789abcdef',
  /** base64url of 32 bytes, as DATA_ENCRYPTION_KEY must be. */
  data: 'dGVzdC1kYXRhLWVuY3J5cHRpb24ta2V5LTMyYnl0ZXM',
}
