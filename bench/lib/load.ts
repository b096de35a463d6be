/**
 * One class of load (removals, job reads, SSE streams, result downloads) driven by autocannon on
 * 127.0.0.1, with every response's latency and status recorded here: autocannon's own summary has
 * no p95, and the bench must see each 5xx's `Retry-After`.
 */
import { randomUUID } from 'node:crypto'
import autocannon from 'autocannon'

export interface LoadClass {
  name: string
  connections: number
  /** Requests per second over all connections (unset: as fast as answers come). */
  rate?: number
  method: 'GET' | 'POST'
  /** The path of the next request (called once per request). */
  path(): string
  headers?: Record<string, string>
  body?: Buffer
  /** A fresh Idempotency-Key on every request (creation routes). */
  idempotent?: boolean
  /** Sees each response's status and body (e.g. to collect job ids). */
  onBody?(status: number, body: string): void
}

export interface ClassResult {
  name: string
  connections: number
  requests: number
  throughput: number
  latencyMs: { p50: number; p95: number; p99: number; max: number }
  /** Count per status code; `error` for a connection error or a timeout (no answer). */
  statuses: Record<string, number>
  /** 5xx answers other than 503 with Retry-After: each one breaks the bench's rule. */
  bad5xx: number
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return Math.round(sorted[i] * 10) / 10
}

/** Runs one class for `seconds` against `baseUrl` with the API key; resolves with what it saw. */
export async function runClass(baseUrl: string, apiKey: string, cls: LoadClass, seconds: number): Promise<ClassResult> {
  const latencies: number[] = []
  const statuses: Record<string, number> = {}
  let bad5xx = 0
  const count = (key: string) => {
    statuses[key] = (statuses[key] ?? 0) + 1
  }
  // Without a callback autocannon returns its emitter made thenable; the types show only the promise.
  const instance = autocannon({
    url: baseUrl,
    connections: cls.connections,
    duration: seconds,
    timeout: 30,
    ...(cls.rate ? { overallRate: cls.rate } : {}),
    requests: [
      {
        method: cls.method,
        headers: { authorization: `Bearer ${apiKey}`, ...cls.headers },
        ...(cls.body ? { body: cls.body } : {}),
        setupRequest: (req) => {
          const headers = cls.idempotent ? { ...req.headers, 'idempotency-key': randomUUID() } : req.headers
          return { ...req, path: cls.path(), headers }
        },
        onResponse: (status, body, _context, headers) => {
          count(String(status))
          const retryAfter = (headers as Record<string, string> | undefined)?.['retry-after']
          if (status >= 500 && !(status === 503 && retryAfter)) bad5xx += 1
          cls.onBody?.(status, body)
        },
      },
    ],
  }) as unknown as autocannon.Instance & Promise<autocannon.Result>
  instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime))
  instance.on('reqError', () => count('error'))
  const result = await instance
  if (result.timeouts) statuses.timeout = result.timeouts
  latencies.sort((a, b) => a - b)
  return {
    name: cls.name,
    connections: cls.connections,
    requests: latencies.length,
    throughput: Math.round((latencies.length / seconds) * 10) / 10,
    latencyMs: {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
    },
    statuses,
    bad5xx,
  }
}

/** A multipart body with the `image` and `options` parts of a removal. */
export function removalForm(image: Uint8Array, mimeType: string, options: unknown): { body: Buffer; type: string } {
  const boundary = `bench-${randomUUID()}`
  const head = (name: string, extra = '') =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n`
  const body = Buffer.concat([
    Buffer.from(`${head('image', '; filename="image"')}Content-Type: ${mimeType}\r\n\r\n`),
    Buffer.from(image),
    Buffer.from(`\r\n${head('options')}\r\n${JSON.stringify(options)}\r\n--${boundary}--\r\n`),
  ])
  return { body, type: `multipart/form-data; boundary=${boundary}` }
}
