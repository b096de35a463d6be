/**
 * `GET /metrics` (metrics.ts) and the one JSON log line per request: scraped after jobs run on a
 * stub segmenter in-process (no model, no port), with a held run for the queue, slot and
 * abandonment gauges. The scrape is parsed as Prometheus text and each family checked by value.
 */
import sharp from 'sharp'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { Limiter } from '../src/limiter.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp } from '../src/server.js'
import { signedRequest } from '../src/auth.js'
import { collectFrames, postJob, removeParts, STUB_INPUT, type Target, waitFor } from './helpers.js'

const KEY = 'metrics-test-key'
const TOKEN = 'metrics-test-token'
const REMOVE = '/v1/remove'

/** A stub model; with `held`, each run waits until the test calls `finishNext`. */
function stubModel({ held = false } = {}) {
  const waiting: (() => void)[] = []
  const segmenter: Segmenter = {
    version: 'stub@1',
    input: STUB_INPUT,
    async segment(image) {
      if (held) await new Promise<void>((finish) => waiting.push(finish))
      return { data: new Uint8Array(image.width * image.height).fill(200), width: image.width, height: image.height }
    },
    async close() {},
  }
  const finishNext = async () => {
    await waitFor(() => waiting.length > 0, 'a run to reach the segmenter')
    waiting.shift()?.()
  }
  return { segmenter, finishNext }
}

function appWith(segmenter: Segmenter, limiter = new Limiter()) {
  const app = createApp({ signingKey: KEY, model: { current: segmenter }, limiter, metricsToken: TOKEN })
  const target: Target = { request: (path, init) => app.request(path, init) }
  return { app, target }
}

/** One sample per line: `name{labels} value`, keyed by `name{labels}` exactly as printed. */
async function scrape(target: Target): Promise<Map<string, number>> {
  const res = await Promise.resolve(
    typeof target === 'string'
      ? fetch(target)
      : target.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }),
  )
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  const samples = new Map<string, number>()
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    samples.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return samples
}

let image: Uint8Array
beforeAll(async () => {
  image = new Uint8Array(
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3a6' } })
      .png()
      .toBuffer(),
  )
})
afterEach(() => vi.restoreAllMocks())

describe('GET /metrics', () => {
  it('is off (404) without METRICS_TOKEN, and refuses a missing or wrong bearer token with 401', async () => {
    const open = createApp({ signingKey: KEY, model: { current: stubModel().segmenter } })
    expect((await open.request('/metrics')).status).toBe(404)
    const { app } = appWith(stubModel().segmenter)
    const missing = await app.request('/metrics')
    expect(missing.status).toBe(401)
    expect(await missing.json()).toMatchObject({ code: 'invalid_signature' })
    expect((await app.request('/metrics', { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(401)
  })

  it('counts requests, errors and jobs, with stage and run histograms, an idle queue and RSS after two jobs', async () => {
    const { target } = appWith(stubModel().segmenter)
    for (let i = 0; i < 2; i++) expect((await postJob(target, KEY, REMOVE, removeParts(image))).done).toBeDefined()
    // A refusal (bad signature) and a job that fails in its stream (not an image): one error each.
    const unsigned = await target.request(REMOVE, { method: 'POST', body: new Uint8Array(image) })
    expect(unsigned.status).toBe(401)
    const failed = await postJob(target, KEY, REMOVE, removeParts(new TextEncoder().encode('not an image')))
    expect(failed.error).toMatchObject({ code: 'unsupported_media' })

    const m = await scrape(target)
    expect(m.get('inference_requests_total{method="POST",route="/v1/remove",status="200"}')).toBe(3)
    expect(m.get('inference_requests_total{method="POST",route="/v1/remove",status="401"}')).toBe(1)
    expect(m.get('inference_errors_total{route="/v1/remove",status="401",code="invalid_signature"}')).toBe(1)
    expect(m.get('inference_errors_total{route="/v1/remove",status="200",code="unsupported_media"}')).toBe(1)
    expect(m.get('inference_jobs_total{route="/v1/remove",outcome="done"}')).toBe(2)
    expect(m.get('inference_jobs_total{route="/v1/remove",outcome="error"}')).toBe(1)
    expect(m.get('inference_job_run_seconds_count{route="/v1/remove",outcome="done"}')).toBe(2)
    expect(m.get('inference_job_run_seconds_sum{route="/v1/remove",outcome="done"}')).toBeGreaterThan(0)
    expect(m.get('inference_queue_wait_seconds_count{route="/v1/remove"}')).toBeGreaterThanOrEqual(2)
    expect(m.get('inference_stage_seconds_count{route="/v1/remove",stage="segmenting"}')).toBe(2)
    expect(m.get('inference_stage_seconds_sum{route="/v1/remove",stage="segmenting"}')).toBeGreaterThan(0)
    const steps = [...m].filter(([k]) => k.startsWith('inference_step_seconds_count{route="/v1/remove"'))
    expect(steps.length).toBeGreaterThan(0)
    for (const [, count] of steps) expect(count).toBe(2)
    expect(m.get('inference_queue_length')).toBe(0)
    expect(m.get('inference_queue_limit')).toBe(8)
    expect(m.get('inference_slots{state="busy"}')).toBe(0)
    expect(m.get('inference_slots{state="free"}')).toBe(1)
    expect(m.get('inference_model_ready')).toBe(1)
    expect(m.get('inference_abandoned_total{phase="queued"}')).toBe(0)
    expect(m.get('inference_abandoned_total{phase="running"}')).toBe(0)
    expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024)
  })

  it('shows a busy slot and a waiting request while a run holds the model, and a caller that left the queue as abandoned', async () => {
    const model = stubModel({ held: true })
    const { target } = appWith(model.segmenter)
    const first = postJob(target, KEY, REMOVE, removeParts(image))
    await waitFor(async () => (await scrape(target)).get('inference_slots{state="busy"}') === 1, 'the first run')
    const caller = new AbortController()
    const { headers, body } = await signedRequest(KEY, 'POST', REMOVE, removeParts(image))
    const second = Promise.resolve(target.request(REMOVE, { method: 'POST', headers, body, signal: caller.signal }))
    second.catch(() => undefined)
    await waitFor(async () => (await scrape(target)).get('inference_queue_length') === 1, 'the second to queue')
    expect((await scrape(target)).get('inference_slots{state="free"}')).toBe(0)
    caller.abort()
    await waitFor(async () => (await scrape(target)).get('inference_queue_length') === 0, 'the second to leave')
    await model.finishNext()
    expect((await first).done).toBeDefined()
    const m = await scrape(target)
    expect(m.get('inference_abandoned_total{phase="queued"}')).toBe(1)
    expect(m.get('inference_slots{state="busy"}')).toBe(0)
    expect(m.get('inference_jobs_total{route="/v1/remove",outcome="done"}')).toBe(1)
  })
})

describe('request logs', () => {
  it('writes one JSON line per request with its route, status, request id and the traceparent trace id, and never the query or token', async () => {
    const lines: string[] = []
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line))
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    const { target } = appWith(stubModel().segmenter)
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const path = `${REMOVE}?sig=query-secret`
    const { headers, body } = await signedRequest(KEY, 'POST', path, removeParts(image))
    const res = await target.request(path, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'req_trace-test-1' },
      body,
    })
    expect((await collectFrames(res)).done).toBeDefined()
    expect(res.headers.get('x-request-id')).toBe('req_trace-test-1')
    await waitFor(() => lines.some((l) => l.includes('"msg":"job"')), 'the job line')

    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(parsed.filter((l) => l.msg === 'request')).toEqual([
      expect.objectContaining({ method: 'POST', route: REMOVE, status: 200, requestId: 'req_trace-test-1', traceId }),
    ])
    expect(parsed.find((l) => l.msg === 'job')).toMatchObject({ route: REMOVE, outcome: 'done', traceId })
    const token = headers.authorization.slice('Bearer '.length)
    for (const line of lines) {
      expect(line).not.toContain('query-secret')
      expect(line).not.toContain('?')
      expect(line).not.toContain(token)
    }
  })

  it('makes a trace id for a request without a traceparent (or with a malformed one)', async () => {
    const lines: string[] = []
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line))
    const { app } = appWith(stubModel().segmenter)
    await app.request('/metrics', {
      headers: {
        authorization: `Bearer ${TOKEN}`,
        traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      },
    })
    const [line] = lines.map((l) => JSON.parse(l) as { traceId: string; route: string })
    expect(line.route).toBe('/metrics')
    expect(line.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(line.traceId).not.toMatch(/^0+$/)
  })

  it('counts a passing health probe without a line, and logs a failing one', async () => {
    const lines: string[] = []
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line))
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    const { app, target } = appWith(stubModel().segmenter)
    expect((await app.request('/health/live')).status).toBe(200)
    expect((await app.request('/health/ready')).status).toBe(200)
    expect(lines).toEqual([])
    const m = await scrape(target)
    expect(m.get('inference_requests_total{method="GET",route="/health/live",status="200"}')).toBe(1)
    expect(m.get('inference_requests_total{method="GET",route="/health/ready",status="200"}')).toBe(1)

    // A server still loading its model answers 503: that probe is logged.
    const loading = createApp({ signingKey: KEY, model: { current: undefined }, limiter: new Limiter() })
    expect((await loading.request('/health/ready')).status).toBe(503)
    const probes = lines.map((l) => JSON.parse(l) as { route: string }).filter((l) => l.route.startsWith('/health/'))
    expect(probes).toEqual([expect.objectContaining({ msg: 'request', route: '/health/ready', status: 503 })])
  })
})
