/**
 * A webhook receiver on 127.0.0.1 for the fault benchmark: it records every attempt (delivery id,
 * event, when) and answers as its mode says: `ok` (200), `fail-first` (500 to the first attempt of
 * each delivery, 200 after), `timeout-first` (holds the first attempt of each delivery past the
 * sender's 15 s timeout, 200 after).
 */
import { createServer, type Server } from 'node:http'

export type ReceiverMode = 'ok' | 'fail-first' | 'timeout-first'

export interface Attempt {
  deliveryId: string
  eventId: string
  type: string
  jobId?: string
  at: number
  answered: number | 'held'
}

export interface Receiver {
  url: string
  mode: ReceiverMode
  attempts: Attempt[]
  close(): Promise<void>
}

/** Longer than the outbox's 15 s delivery timeout (docs/decisions.md, Webhooks). */
const HOLD_MS = 20_000

export async function startReceiver(): Promise<Receiver> {
  const seen = new Set<string>()
  const receiver: Receiver = { url: '', mode: 'ok', attempts: [], close: async () => {} }
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d: string) => (body += d))
    req.on('end', () => {
      const deliveryId = String(req.headers['webhook-id'] ?? '')
      const event = JSON.parse(body || '{}') as { id?: string; type?: string; data?: { jobId?: string } }
      const first = !seen.has(deliveryId)
      seen.add(deliveryId)
      const attempt: Attempt = {
        deliveryId,
        eventId: event.id ?? '',
        type: event.type ?? '',
        jobId: event.data?.jobId,
        at: Date.now(),
        answered: 200,
      }
      receiver.attempts.push(attempt)
      if (first && receiver.mode === 'fail-first') {
        attempt.answered = 500
        return res.writeHead(500).end('not now')
      }
      if (first && receiver.mode === 'timeout-first') {
        attempt.answered = 'held'
        return void setTimeout(() => res.writeHead(200).end('late'), HOLD_MS)
      }
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as { port: number }
  receiver.url = `http://127.0.0.1:${address.port}/hook`
  receiver.close = () => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(() => resolve()))
  }
  return receiver
}
