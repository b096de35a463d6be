/**
 * What a failed webhook delivery says, and where (issue 30 item 6): a delivery's `lastError`
 * (GET …/deliveries) is a plain-words reason, with the status in `responseStatus`, never an
 * exception's text; and neither it nor the Worker's log lines carry the endpoint URL's query
 * string, where receivers often put a token. Each endpoint here has such a query.
 */
import { env } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type LogLevel, log, logSink } from '../../src/lib/log'
import { publishEvent } from '../../src/services/events'
import { seedWorkspace } from './helpers'
import { jobEvent, listDeliveries, newReceiver, registerWebhook, waitFor } from './webhook-helpers'

/** A secret-looking query a receiver might use to authenticate its sender. */
const SECRET = 'tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0'
const QUERY = `?token=${SECRET}&sig=abc123`

const original = { ...logSink }
let lines: string[] = []

beforeEach(() => {
  lines = []
  logSink.write = (_level: LogLevel, line: string) => void lines.push(line)
})
afterEach(() => Object.assign(logSink, original))

/** Registers `url` for the workspace, publishes one event and waits for its first attempt's outcome. */
async function firstFailure(url: string) {
  const { key, workspaceId } = await seedWorkspace()
  const endpoint = await registerWebhook(key, url)
  await publishEvent(env, jobEvent(workspaceId))
  const [delivery] = await waitFor(async () => {
    const list = await listDeliveries(key, endpoint.id)
    return list[0] && list[0].attempts > 0 && list[0].status !== 'pending' ? list : undefined
  }, 'the first attempt')
  return delivery
}

/** Nothing the Worker logged quotes the URL's query. */
function expectNoQueryInLogs() {
  const leaked = lines.filter((line) => line.includes(SECRET) || line.includes('sig=abc123'))
  expect(leaked).toEqual([])
}

describe('a failed webhook delivery says why in plain words', () => {
  // workerd's fetch rejects both of the next two with "Network connection lost.": one reason.
  it('connection refused: a plain reason, no status, no query, no exception text', async () => {
    const delivery = await firstFailure(`${env.CLOSED_ORIGIN}/hooks/cutout${QUERY}`)
    expect(delivery).toMatchObject({ status: 'retrying', attempts: 1, responseStatus: null })
    expect(delivery.lastError).toBe('Connection refused or closed before an answer')
    expectNoQueryInLogs()
  })

  it('connection closed without an answer: a plain reason, no query, no exception text', async () => {
    const receiver = await newReceiver([{ status: 200, drop: true }])
    const delivery = await firstFailure(`${receiver.url}${QUERY}`)
    expect(delivery).toMatchObject({ status: 'retrying', attempts: 1, responseStatus: null })
    expect(delivery.lastError).toBe('Connection refused or closed before an answer')
    expectNoQueryInLogs()
  })

  it('HTTP 500: the status, in words and in responseStatus, and no query', async () => {
    const receiver = await newReceiver([{ status: 500, body: `upstream said ${SECRET}` }])
    const delivery = await firstFailure(`${receiver.url}${QUERY}`)
    expect(delivery).toMatchObject({ status: 'retrying', responseStatus: 500 })
    expect(delivery.lastError).toBe('Expected 2xx but received 500')
    expectNoQueryInLogs()
  })

  it("a redirect: where it points, without the Location's query", async () => {
    const elsewhere = await newReceiver()
    const receiver = await newReceiver([{ status: 302, headers: { location: `${elsewhere.url}${QUERY}` } }])
    const delivery = await firstFailure(`${receiver.url}${QUERY}`)
    expect(delivery).toMatchObject({ status: 'retrying', responseStatus: 302 })
    expect(delivery.lastError).toBe(
      `Expected 2xx but received 302; redirects are not followed (Location: ${elsewhere.url})`,
    )
    expectNoQueryInLogs()
  })
})

it('a log line never carries a URL query, whatever a caller passes in it', () => {
  log('warn', 'something failed', { error: `TypeError: could not fetch https://hooks.example/in${QUERY}#frag` })
  expect(lines).toHaveLength(1)
  expect(JSON.parse(lines[0])).toMatchObject({ error: 'TypeError: could not fetch https://hooks.example/in' })
  expectNoQueryInLogs()
})
