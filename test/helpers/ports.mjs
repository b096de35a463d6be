import { createServer } from 'node:net'

/** Asks the OS for a free TCP port on 127.0.0.1. */
export function freePort() {
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
