/**
 * A DNS-over-HTTPS stand-in on 127.0.0.1 for the SSRF guard's resolver (`DNS_RESOLVER_URL`): the
 * JSON API that cloudflare-dns.com and dns.google answer (`application/dns-json`).
 *
 * `GET /dns-query?name=<name>&type=A|AAAA` (or the numeric types 1 and 28) answers
 * `{"Status":0,"Question":[…],"Answer":[{"name","type","TTL","data"}]}` from a fixed zone;
 * a name the zone does not hold is NXDOMAIN (`Status: 3`, no answers), a held name without records
 * of the asked type is NOERROR with no answers. A query without `name` is 400, like the real ones.
 *
 * The answers only feed the guard: no test connects to a public address it returns.
 */
import { createServer, type Server } from 'node:http'

/** Addresses per name; IPv6 ones (containing `:`) are the AAAA records. */
export type DohZone = Record<string, string[]>

export const TEST_ZONE: DohZone = {
  // Used through the public API by test/worker/dns.test.ts.
  'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'private.example': ['10.0.0.5'],
  // Used by test/worker/webhooks.test.ts and sources.test.ts.
  'public.test': ['93.184.216.34'],
  'mixed.test': ['93.184.216.34', '10.1.2.3'],
  'private.test': ['192.168.1.10'],
  'metadata.test': ['169.254.169.254'],
  'v6-loopback.test': ['::1'],
}

const TYPES: Record<string, number> = { A: 1, '1': 1, AAAA: 28, '28': 28 }

export function startDohServer(port: number, zone: DohZone = TEST_ZONE): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`)
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/dns-json' })
      res.end(JSON.stringify(body))
    }
    if (url.pathname !== '/dns-query' || req.method !== 'GET') return reply(404, { error: 'not found' })
    const name = (url.searchParams.get('name') ?? '').toLowerCase().replace(/\.$/, '')
    const type = TYPES[(url.searchParams.get('type') ?? 'A').toUpperCase()]
    if (!name || !type) return reply(400, { error: 'Invalid name or type' })
    const question = [{ name: `${name}.`, type }]
    const flags = { TC: false, RD: true, RA: true, AD: false, CD: false }
    const records = zone[name]
    if (!records) return reply(200, { Status: 3, ...flags, Question: question })
    const answers = records
      .filter((address) => address.includes(':') === (type === 28))
      .map((data) => ({ name: `${name}.`, type, TTL: 60, data }))
    return reply(200, { Status: 0, ...flags, Question: question, ...(answers.length ? { Answer: answers } : {}) })
  })
  // Idle connections stay open until the client (workerd's pool) closes them: one Node closed after
  // its 5 s keep-alive could be taken up at that instant (a CI run: "Network connection lost").
  // Not `maxRequestsPerSocket`: Node answers 503 to a request sent on a socket past its limit.
  server.keepAliveTimeout = 0
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)))
}
