import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import { signResultPath } from '../../src/services/result-url'
import { sweepExpiredResults } from '../../src/services/retention'
import {
  api,
  expectProblem,
  fixtureBytes,
  inferenceStats,
  modelBudget,
  RAW_CUTOUT,
  removal,
  seedWorkspace,
  setInferenceMode,
  settled,
  TERMINAL,
  testBudget,
  uploadImage,
  usage,
  waitFor,
  waitForJobs,
  waitForStatus,
} from './helpers'
import { readEvents } from './sse'
import { storedResult } from './stored-results'

async function succeededJob(key: string) {
  const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
  const job = await settled(await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { wait: 8 }), { key })
  expect(job).toMatchObject({ status: 'succeeded', result: { url: expect.any(String) } })
  return job as typeof job & { result: { url: string; expiresAt: string } }
}

describe('GET /v1/jobs/{id}', () => {
  it('404 job_not_found for another workspace’s job and for unknown ids', async () => {
    const owner = await seedWorkspace()
    const other = await seedWorkspace()
    const upload = await uploadImage(owner.key, await fixtureBytes('astronaut.png'))
    const job = (await (await removal(owner.key, { uploadId: upload.id, options: RAW_CUTOUT })).json()) as {
      id: string
    }
    expect((await api(`/v1/jobs/${job.id}`, { key: owner.key })).status).toBe(200)
    for (const path of [`/v1/jobs/${job.id}`, `/v1/jobs/${job.id}/result`, `/v1/jobs/${job.id}/events`]) {
      await expectProblem(await api(path, { key: other.key }), 404, 'job_not_found')
    }
    await expectProblem(await api(`/v1/jobs/${job.id}`, { method: 'DELETE', key: other.key }), 404, 'job_not_found')
    await expectProblem(await api(`/v1/jobs/${crypto.randomUUID()}`, { key: owner.key }), 404, 'job_not_found')
    await expectProblem(await api('/v1/jobs/not-a-uuid', { key: owner.key }), 400, 'invalid_input', 'id')
    // Another workspace's upload cannot be used either.
    await expectProblem(
      await removal(other.key, { uploadId: upload.id, options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'uploadId',
    )
    expect((await waitForStatus(owner.key, job.id, TERMINAL)).status).toBe('succeeded')
  })
})

describe('GET /v1/jobs', () => {
  it('lists newest first with a cursor and filters', { timeout: testBudget(3) }, async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { wait: 8 })
      ids.push(((await res.json()) as { id: string }).id)
    }
    const page1 = (await (await api('/v1/jobs?limit=2', { key })).json()) as {
      jobs: { id: string }[]
      nextCursor: string
    }
    expect(page1.jobs.map((j) => j.id)).toEqual([ids[2], ids[1]])
    const page2 = (await (await api(`/v1/jobs?limit=2&cursor=${page1.nextCursor}`, { key })).json()) as {
      jobs: { id: string }[]
      nextCursor: string | null
    }
    expect(page2.jobs.map((j) => j.id)).toEqual([ids[0]])
    expect(page2.nextCursor).toBeNull()
    const failed = (await (await api('/v1/jobs?status=failed', { key })).json()) as { jobs: unknown[] }
    expect(failed.jobs).toEqual([])
    await expectProblem(await api('/v1/jobs?limit=101', { key }), 400, 'invalid_input', 'limit')
    await expectProblem(await api('/v1/jobs?status=done', { key }), 400, 'invalid_input', 'status')
    // Each waited up to 8 s, which a busy machine may not have been enough for: none is left running.
    const ended = await waitForJobs(key, ids, modelBudget(3))
    expect(ended.map((j) => j.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
  })
})

describe('GET /v1/jobs/{id}/result', () => {
  it('serves bytes with a key or a signed URL, refuses a tampered signature, and 410 after 24 h', async () => {
    const { key } = await seedWorkspace()
    const job = await succeededJob(key)
    const direct = await api(`/v1/jobs/${job.id}/result`, { key })
    expect(direct.status).toBe(200)
    expect(direct.headers.get('content-type')).toBe('image/png')
    await direct.arrayBuffer()
    // Without a key or a signature the caller is an anonymous device, which does not own the job: it needs a credential.
    await expectProblem(await api(`/v1/jobs/${job.id}/result`), 401, 'invalid_api_key')
    const tampered = job.result.url.replace(/sig=([0-9a-f])/, (_, c) => `sig=${c === '0' ? '1' : '0'}`)
    await expectProblem(await api(tampered), 401, 'invalid_api_key')

    // SPEC.md §2: the result URL is valid for 10 minutes, and says until when.
    const untilMs = Date.parse(job.result.expiresAt) - Date.now()
    expect(untilMs).toBeGreaterThan(9 * 60_000)
    expect(untilMs).toBeLessThanOrEqual(10 * 60_000 + 1000)
    const path = `/v1/jobs/${job.id}/result`
    const signedAgo = (minutes: number) => signResultPath(env.RESULT_SIGNING_KEY, path, Date.now() - minutes * 60_000)
    expect((await api((await signedAgo(9)).path)).status).toBe(200)
    await expectProblem(await api((await signedAgo(11)).path), 401, 'invalid_api_key')

    // A day later the bytes are gone but the job remains.
    const past = new Date(Date.now() - 25 * 3_600_000).toISOString()
    await env.DB.prepare('UPDATE jobs SET completed_at = ?, expires_at = ? WHERE id = ?')
      .bind(past, new Date(Date.now() - 3_600_000).toISOString(), job.id)
      .run()
    expect(await sweepExpiredResults(env)).toBeGreaterThanOrEqual(1)
    expect(await env.BUCKET.get(`results/${job.id}.png`)).toBeNull()
    const gone = await expectProblem(await api(`/v1/jobs/${job.id}/result`, { key }), 410, 'asset_expired')
    expect(gone.retryable).toBe(false)
    const meta = (await (await api(`/v1/jobs/${job.id}`, { key })).json()) as { status: string; result: unknown }
    expect(meta).toMatchObject({ status: 'succeeded', result: null })
  })
})

describe('a signed result URL: the signature is the authorization', () => {
  for (const kind of ['remove_background', 'export'] as const) {
    it(`${kind}: 200 with the same bytes whatever credential rides along; a bad signature is refused the same way`, async () => {
      const owner = await seedWorkspace()
      const other = await seedWorkspace()
      const result = await storedResult(owner.workspaceId, kind)
      const credentials = {
        none: undefined,
        bad: 'sk_live_not-a-real-key',
        'another workspace': other.key,
        'the same workspace': owner.key,
      }
      for (const [who, key] of Object.entries(credentials)) {
        const res = await api(result.url, { key })
        expect(res.status, who).toBe(200)
        expect(res.headers.get('content-type'), who).toBe('image/png')
        expect(new Uint8Array(await res.arrayBuffer()), who).toEqual(result.bytes)
      }
      const expired = (await signResultPath(env.RESULT_SIGNING_KEY, result.path, Date.now() - 11 * 60_000)).path
      const tampered = result.url.replace(/sig=([0-9a-f])/, (_, c) => `sig=${c === '0' ? '1' : '0'}`)
      const wrongPath = result.url.replace(result.id, (await storedResult(owner.workspaceId, kind)).id)
      const noSig = `${result.path}?exp=${result.url.match(/exp=(\d+)/)![1]}`
      for (const url of [expired, tampered, wrongPath, noSig]) {
        const details = new Set<unknown>()
        for (const [who, key] of Object.entries(credentials)) {
          const refused = await expectProblem(await api(url, { key }), 401, 'invalid_api_key').catch((err) => {
            throw new Error(`${who}: ${err.message}`)
          })
          details.add(refused.detail)
        }
        expect(details.size, url).toBe(1)
      }
    })
  }
})

describe('DELETE /v1/jobs/{id}', () => {
  it('cancels a queued job at once and releases its hold', async () => {
    const { key } = await seedWorkspace({ credits: 3 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    await setInferenceMode('saturated')
    try {
      const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
      expect(res.status).toBe(202)
      const job = (await res.json()) as { id: string; modelVersion: string | null }
      // DESIGN.md §3: no model has touched a queued job yet.
      expect(job.modelVersion).toBeNull()
      expect((await usage(key)).held).toBe(1)
      const canceled = await api(`/v1/jobs/${job.id}`, { method: 'DELETE', key })
      expect(canceled.status).toBe(200)
      expect(await canceled.json()).toMatchObject({
        id: job.id,
        status: 'canceled',
        stage: 'queued',
        modelVersion: null,
      })
      expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
      // Terminal states never change: a second cancel is a no-op.
      expect(await (await api(`/v1/jobs/${job.id}`, { method: 'DELETE', key })).json()).toMatchObject({
        status: 'canceled',
      })
    } finally {
      await setInferenceMode('normal')
    }
  })

  it('aborts a job whose inference call is in flight', async () => {
    const { key } = await seedWorkspace({ credits: 3 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    // The proxy takes the removal and never answers: the call stays in flight, however slow or
    // fast the machine, until the cancel aborts it.
    await setInferenceMode('hold-remove')
    try {
      const job = (await (await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })).json()) as { id: string }
      await waitFor(async () => (await inferenceStats()).heldCalls === 1, 'the removal call to reach the proxy')
      // No stage frame has come back, so the job reports only what it passed: preparing.
      expect(await (await api(`/v1/jobs/${job.id}`, { key })).json()).toMatchObject({ stage: 'preparing' })
      const res = await api(`/v1/jobs/${job.id}`, { method: 'DELETE', key })
      expect(res.status).toBe(200)
      const final = await waitForStatus(key, job.id, TERMINAL)
      expect(final).toMatchObject({ status: 'canceled', stage: 'preparing', result: null })
      expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
      // The call was aborted, not left running: the proxy saw its client go away.
      await waitFor(async () => (await inferenceStats()).abortedCalls === 1, 'the held call to be aborted')
      expect(await inferenceStats()).toMatchObject({ removeCalls: 1, heldCalls: 1, abortedCalls: 1 })
    } finally {
      await setInferenceMode('normal')
    }
  })
})

describe('GET /v1/jobs/{id}/events', () => {
  it('streams progress in stage order, then completed; Last-Event-ID replays only later events', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const created = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
    const requestId = created.headers.get('x-request-id')
    const job = (await created.json()) as { id: string }
    const res = await api(`/v1/jobs/${job.id}/events`, { key })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const events = await readEvents(res)
    expect(events.map((e) => e.event)).toEqual([
      'image.job.created.v1',
      ...Array(5).fill('image.job.progress.v1'),
      'image.job.completed.v1',
    ])
    expect(events.map((e) => e.data.data.stage)).toEqual([
      'queued',
      'preparing',
      'segmenting',
      'refining',
      'rendering',
      'storing',
      'complete',
    ])
    for (const e of events) {
      expect(e.data).toMatchObject({
        id: e.id,
        type: e.event,
        workspaceId,
        aggregateId: job.id,
        correlationId: requestId,
      })
      expect(e.data.data.jobId).toBe(job.id)
      expect(Date.parse(e.data.occurredAt)).not.toBeNaN()
    }
    const resumed = await readEvents(
      await api(`/v1/jobs/${job.id}/events`, { key, headers: { 'last-event-id': events[3].id } }),
    )
    expect(resumed.map((e) => e.id)).toEqual(events.slice(4).map((e) => e.id))
  })

  it('a held job’s quiet stream hears a keepalive comment, and ends with the cancel', async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    // The proxy takes the removal and never answers: nothing happens to the job until the cancel.
    await setInferenceMode('hold-remove')
    try {
      const job = (await (await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })).json()) as { id: string }
      await waitFor(async () => (await inferenceStats()).heldCalls === 1, 'the removal call to reach the proxy')
      const res = await api(`/v1/jobs/${job.id}/events`, { key })
      expect(res.status).toBe(200)
      const stream = rawStream(res)
      // SSE_KEEPALIVE_MS is 200 in the worker tests (25 s in production).
      const quiet = await stream.readUntil(': keepalive\n\n', 5_000)
      expect(quiet.ended).toBe(false)
      expect(quiet.text).toContain(': keepalive\n\n')
      expect((await readEvents(new Response(quiet.text))).map((e) => e.data.data.stage)).toEqual([
        'queued',
        'preparing',
      ])

      expect((await api(`/v1/jobs/${job.id}`, { method: 'DELETE', key })).status).toBe(200)
      const rest = await stream.readUntil(null, 60_000)
      expect(rest.ended).toBe(true)
      expect((await readEvents(new Response(quiet.text + rest.text))).map((e) => e.event).at(-1)).toBe(
        'image.job.canceled.v1',
      )
    } finally {
      await setInferenceMode('normal')
    }
  })
})

/**
 * A stream's raw text, comments included (the SSE parser skips them): `readUntil` reads until the
 * text so far contains `needle` (until the stream ends when null) or `ms` pass, and says whether it ended.
 */
function rawStream(res: Response) {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  return {
    async readUntil(needle: string | null, ms: number): Promise<{ text: string; ended: boolean }> {
      const timeUp = new Promise<'time'>((resolve) => setTimeout(() => resolve('time'), ms))
      let text = ''
      while (needle === null || !text.includes(needle)) {
        const read = await Promise.race([reader.read(), timeUp])
        if (read === 'time') return { text, ended: false }
        if (read.done) return { text, ended: true }
        text += read.value
      }
      return { text, ended: false }
    },
  }
}
