/**
 * Logs and traces at the edge (docs/operations.md): a request's `traceparent` trace id is logged
 * with the request, kept on the job, logged with each of the runner's transitions (one JSON line
 * each, with kind, level, stage timings and outcome, and an Analytics Engine datapoint with the
 * same facts) and sent to the inference server, whose own request line names it; so are the calls
 * a client waits on (a catalog image, an upload's inspection). No line carries an API key, an `sk_`
 * prefix, a raw workspace id or a query string (the upload's signed URL).
 * The edge's lines and datapoints are read through `logSink` (src/lib/log.ts); the inference
 * server's (the test world's stub-segmenter server) through the fixture server's control route.
 */
import { env } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { newTraceId } from '../../src/contract/trace'
import { type LogLevel, logSink } from '../../src/lib/log'
import { api, fixtureBytes, RAW_CUTOUT, seedWorkspace, settled, uploadImage, waitFor } from './helpers'
import { succeededRemoval } from './project-helpers'

type Line = Record<string, unknown>

const original = { ...logSink }
let lines: string[]
let points: AnalyticsEngineDataPoint[]
beforeEach(() => {
  lines = []
  points = []
  logSink.write = (_level: LogLevel, line: string) => void lines.push(line)
  logSink.datapoint = (_dataset, point) => void points.push(point)
})
afterEach(() => Object.assign(logSink, original))

const parsed = () => lines.map((l) => JSON.parse(l) as Line)
const traced = (traceId: string) => ({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` })

async function inferenceLines(): Promise<Line[]> {
  const res = await fetch(`${env.FIXTURE_ORIGIN}/control/inference/logs`)
  const { lines } = (await res.json()) as { lines: string[] }
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line)
}

/** The inference server's request lines of one trace, once there are `count` (all answered 200). */
async function linesOf(traceId: string, count: number): Promise<Line[]> {
  const ours = await waitFor(
    async () => {
      const found = (await inferenceLines()).filter((l) => l.msg === 'request' && l.traceId === traceId)
      return found.length >= count && found
    },
    `${count} inference server line(s) of trace ${traceId}`,
    10_000,
  )
  for (const line of ours) expect(line).toMatchObject({ method: 'POST', status: 200 })
  return ours
}

describe('logs, traces and job telemetry', () => {
  it("follows one job by its trace id from the edge's request line through the runner into the inference server", async () => {
    const { key, workspaceId } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const traceId = newTraceId()
    const res = await api('/v1/removals', {
      method: 'POST',
      key,
      json: { uploadId: upload.id, options: RAW_CUTOUT },
      headers: {
        'idempotency-key': crypto.randomUUID(),
        prefer: 'wait=30',
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
    })
    const requestId = res.headers.get('x-request-id')
    const job = await settled(res, { key })
    expect(job.status).toBe('succeeded')
    await waitFor(async () => parsed().some((l) => l.msg === 'job' && l.status === 'succeeded'), 'the terminal line')

    // The edge's request line.
    const edge = parsed().find((l) => l.msg === 'request' && l.route === '/v1/removals' && l.method === 'POST')
    expect(edge).toMatchObject({
      traceId,
      requestId,
      status: expect.any(Number),
      workspace: expect.stringMatching(/^ws_[0-9a-f]{16}$/),
    })

    // One runner line per transition, in order, each with the job's facts.
    const runner = parsed().filter((l) => l.msg === 'job' && l.jobId === job.id)
    expect(runner.map((l) => `${l.status}/${l.stage}`)).toEqual([
      'queued/queued',
      'processing/preparing',
      'processing/segmenting',
      'processing/refining',
      'processing/rendering',
      'processing/storing',
      'succeeded/complete',
    ])
    for (const line of runner) {
      expect(line).toMatchObject({
        traceId,
        requestId,
        kind: 'remove_background',
        level: 'balanced',
        workspace: edge?.workspace,
      })
    }
    const end = runner.at(-1) as Line & { timings: Record<string, number>; totalMs: number }
    expect(end).toMatchObject({ outcome: 'succeeded', totalMs: expect.any(Number) })
    expect(Object.keys(end.timings)).toEqual(
      expect.arrayContaining(['queued', 'preparing', 'segmenting', 'refining', 'rendering', 'storing']),
    )

    // The same facts as datapoints (ANALYTICS is bound in vitest.worker.config.mts).
    const ours = points.filter((p) => p.blobs?.[7] === job.id)
    expect(ours).toHaveLength(runner.length)
    expect(ours.at(-1)).toMatchObject({
      indexes: [edge?.workspace],
      blobs: ['remove_background', 'balanced', 'succeeded', 'complete', 'succeeded', '', traceId, job.id],
    })
    expect(ours.at(-1)?.doubles?.[1]).toBe(end.totalMs)

    // The inference server logged the call under the same trace id, with the job's request id.
    const inference = await waitFor(
      async () => (await inferenceLines()).find((l) => l.msg === 'request' && l.traceId === traceId),
      "the inference server's line",
      10_000,
    )
    expect(inference).toMatchObject({ method: 'POST', route: '/v1/remove', status: 200, requestId })

    // Nothing secret or identifying in any line: no key, no raw workspace id, no query string.
    for (const line of [...lines, ...(await inferenceLines()).map((l) => JSON.stringify(l))]) {
      expect(line).not.toContain(key)
      expect(line).not.toContain('sk_')
      expect(line).not.toContain(workspaceId)
      expect(line).not.toMatch(/\?|sig=|exp=/)
    }
  })

  it("follows a call the client waits on (a catalog image, an upload's inspection) into the inference server", async () => {
    const { key } = await seedWorkspace()
    const form = new FormData()
    form.append('references', new File([await fixtureBytes('coffee.png')], 'ref.png', { type: 'image/png' }))
    form.append('seed', '7')
    const catalogTrace = newTraceId()
    const made = await api('/v1/catalog-images', { method: 'POST', key, body: form, headers: traced(catalogTrace) })
    expect(made.status).toBe(201)

    const created = (await (await api('/v1/uploads', { method: 'POST', key })).json()) as {
      id: string
      uploadUrl: string
    }
    const bytes = await fixtureBytes('astronaut.png')
    const put = await api(created.uploadUrl, {
      method: 'PUT',
      key,
      body: bytes,
      headers: { 'content-type': 'image/png', 'content-length': String(bytes.byteLength) },
    })
    expect(put.status).toBe(204)
    const inspectTrace = newTraceId()
    const done = await api(`/v1/uploads/${created.id}/complete`, { method: 'POST', key, headers: traced(inspectTrace) })
    expect(done.status).toBe(200)

    expect(await linesOf(catalogTrace, 1)).toEqual([
      expect.objectContaining({ method: 'POST', route: '/v1/catalog', requestId: made.headers.get('x-request-id') }),
    ])
    expect(await linesOf(inspectTrace, 1)).toEqual([
      expect.objectContaining({ method: 'POST', route: '/v1/inspect', requestId: done.headers.get('x-request-id') }),
    ])
  })

  it("follows a project's and a revision's calls into the inference server", async () => {
    const { key } = await seedWorkspace()
    const jobId = await succeededRemoval(key, 'astronaut.png')
    const projectTrace = newTraceId()
    const created = await api('/v1/projects', { method: 'POST', key, json: { jobId }, headers: traced(projectTrace) })
    expect(created.status).toBe(201)
    const project = (await created.json()) as { id: string; currentRevisionId: string }
    const revisionTrace = newTraceId()
    const revised = await api(`/v1/projects/${project.id}/revisions`, {
      method: 'POST',
      key,
      json: {
        baseRevisionId: project.currentRevisionId,
        strokes: [{ tool: 'erase', points: [[0.5, 0.5]], size: 0.05 }],
      },
      headers: traced(revisionTrace),
    })
    expect(revised.status).toBe(201)

    const projectRequest = created.headers.get('x-request-id')
    expect((await linesOf(projectTrace, 2)).map((l) => [l.route, l.requestId])).toEqual([
      ['/v1/inspect', projectRequest],
      ['/v1/revise', projectRequest],
    ])
    expect(await linesOf(revisionTrace, 1)).toEqual([
      expect.objectContaining({ route: '/v1/revise', status: 200, requestId: revised.headers.get('x-request-id') }),
    ])
  })

  it('makes a trace id for a request without a valid traceparent', async () => {
    await api('/health/live', { headers: { traceparent: 'not-a-trace' } })
    const line = parsed().find((l) => l.msg === 'request')
    expect(line).toMatchObject({ route: '/health/live', traceId: expect.stringMatching(/^[0-9a-f]{32}$/) })
  })
})
