/**
 * The SDK sends and retries every operation of /openapi.json as the document's `x-cutout-retry`
 * says (issue 46 item 1): with an Idempotency-Key, repeated with the same key, for
 * `idempotency-key`; repeated as it is for `safe`; sent once for `once`. The rule comes from the
 * generated table (sdk/src/operations.ts), which test/clients/generated.test.ts holds to the
 * document; no route list is kept by hand.
 */
import { Cutout } from '@cutout/sdk'
import { describe, expect, it } from 'vitest'
import { operationRows } from '../../scripts/lib/operation-table'

describe('the SDK sends and retries every operation as the document says', async () => {
  const rows = await operationRows()
  it.each(rows.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (_, row) => {
    const seen: Request[] = []
    const fetch = async (req: Request) => {
      seen.push(req)
      return seen.length === 1 ? new Response('busy', { status: 503 }) : new Response('{}', { status: 200 })
    }
    const cutout = new Cutout({
      baseUrl: 'http://api.test',
      apiKey: 'sk_live_x',
      fetch,
      retry: { maxRetries: 1, baseDelayMs: 1 },
    })
    const path = row.path.replace(/\{([^}]+)\}/g, 'x$1')
    const body = ['GET', 'HEAD', 'DELETE'].includes(row.method) ? undefined : '{}'
    await cutout.send(new Request(`http://api.test${path}`, { method: row.method, body }))
    expect(seen[0].headers.has('idempotency-key'), 'sent with an Idempotency-Key').toBe(row.retry === 'idempotency-key')
    expect(seen.length === 2, 'a 503 retried').toBe(row.retry !== 'once')
    if (seen.length === 2) expect(seen[1].headers.get('idempotency-key')).toBe(seen[0].headers.get('idempotency-key'))
  })
})
