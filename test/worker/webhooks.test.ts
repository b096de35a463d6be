import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { getTableColumns } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { TOLERANCE_SECONDS, verifyWebhook } from '../../docs/examples/verify-webhook.mjs'
import verifierSource from '../../docs/examples/verify-webhook.mjs?raw'
import webhooksDoc from '../../docs/webhooks.md?raw'
import { deliveries } from '../../src/durable/outbox-schema'
import { publishEvent } from '../../src/services/events'
import { guardedPost, SourceFetchError, UnsafeUrlError } from '../../src/services/ssrf'
import { decryptSecret, encryptSecret, nextAttemptAt, parseRetryAfter, signDelivery } from '../../src/services/webhooks'
import {
  api,
  BINARY_MASK,
  expectProblem,
  fixtureBytes,
  modelBudget,
  removal,
  seedWorkspace,
  settled,
  testBudget,
  uploadImage,
} from './helpers'
import {
  createWebhook,
  holdAlarm,
  jobEvent,
  listDeliveries,
  newReceiver,
  outbox,
  registerWebhook,
  waitFor,
  type Received,
} from './webhook-helpers'

const ALL_WEBHOOK_TYPES = [
  'image.job.created.v1',
  'image.job.completed.v1',
  'image.job.failed.v1',
  'image.job.canceled.v1',
  'image.batch.completed.v1',
  'image.export.completed.v1',
  'image.refinement.completed.v1',
]
const S = 1000
const MIN = 60 * S
const H = 60 * MIN

/** Every received request verifies with the doc's verifier; returns the parsed deliveries. */
function verifyAll(received: Received[], secret: string) {
  return received.map((r) => {
    expect(r.method).toBe('POST')
    expect(r.headers['content-type']).toBe('application/json')
    return verifyWebhook(r.body, r.headers, secret)
  })
}

describe('webhook endpoints: create, list, delete', () => {
  it('creates an endpoint with a secret shown once and stored encrypted', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const res = await createWebhook(key, { url: 'https://public.test/hooks/cutout' })
    expect(res.status).toBe(201)
    const created = (await res.json()) as Record<string, any>
    expect(created).toMatchObject({
      url: 'https://public.test/hooks/cutout',
      events: ALL_WEBHOOK_TYPES,
      disabledAt: null,
      disabledReason: null,
    })
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)

    const listed = (await (await api('/v1/webhooks', { key })).json()) as { endpoints: Record<string, unknown>[] }
    const { secret: _secret, ...shown } = created
    expect(listed.endpoints).toEqual([shown])
    expect(JSON.stringify(listed)).not.toContain(created.secret)

    const row = await env.DB.prepare('SELECT * FROM webhook_endpoints WHERE id = ?')
      .bind(created.id)
      .first<Record<string, string>>()
    expect(row?.workspace_id).toBe(workspaceId)
    expect(row?.events).toBeNull()
    expect(row?.secret_ciphertext).not.toContain(created.secret.slice(6))
    expect(await decryptSecret(env.DATA_ENCRYPTION_KEY, row!.secret_ciphertext, created.id)).toBe(created.secret)
  })

  it('keeps a chosen event list', async () => {
    const { key } = await seedWorkspace()
    const events = ['image.job.failed.v1', 'image.batch.completed.v1', 'image.job.failed.v1']
    const created = await registerWebhook(key, 'https://public.test/hooks', events)
    expect(created.events).toEqual(['image.job.failed.v1', 'image.batch.completed.v1'])
  })

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 422, 'unsafe_url', /169\.254\.169\.254 is a link-local address/],
    ['https://private.test/hooks', 422, 'unsafe_url', /resolves to 192\.168\.1\.10/],
    ['https://mixed.test/hooks', 422, 'unsafe_url', /resolves to 10\.1\.2\.3/],
    ['https://nowhere.test/hooks', 422, 'unsafe_url', /has no A or AAAA records/],
    ['https://user:pw@public.test/hooks', 422, 'unsafe_url', /embedded credentials/],
    [
      'http://public.test/hooks',
      400,
      'invalid_input',
      /^Expected an https URL for a public webhook endpoint but received http:$/,
    ],
    ['ftp://public.test/hooks', 400, 'invalid_input', /url/],
    ['not a url', 400, 'invalid_input', /url/],
  ])('refuses url %s with %i', async (url, status, code, detail) => {
    const { key } = await seedWorkspace()
    const body = await expectProblem(await createWebhook(key, { url }), status, code, 'url')
    expect(body.detail).toMatch(detail)
  })

  it('accepts plain http only for allow-listed hosts outside production', async () => {
    const { key } = await seedWorkspace()
    const created = await registerWebhook(key, `${env.FIXTURE_ORIGIN}/receiver/local`)
    expect(created.url).toBe(`${env.FIXTURE_ORIGIN}/receiver/local`)
  })

  it.each([
    [{ url: 'https://public.test/h', events: ['image.job.completed.v1', 'image.job.exploded.v1'] }, 'events.1'],
    [{ url: 'https://public.test/h', events: ['image.job.progress.v1'] }, 'events.0'],
    [{ url: 'https://public.test/h', events: [] }, 'events'],
    [{ url: 'https://public.test/h', events: 'image.job.completed.v1' }, 'events'],
    [{ url: 'https://public.test/h', secret: 'mine' }, 'secret'],
    [{}, 'url'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const { key } = await seedWorkspace()
    await expectProblem(await createWebhook(key, body), 400, 'invalid_input', field)
  })

  it('needs webhooks:write on every route', async () => {
    const { key } = await seedWorkspace({ scopes: ['images:write', 'jobs:read'] })
    const id = crypto.randomUUID()
    await expectProblem(await createWebhook(key, { url: 'https://public.test/h' }), 403, 'insufficient_scope')
    await expectProblem(await api('/v1/webhooks', { key }), 403, 'insufficient_scope')
    await expectProblem(await api(`/v1/webhooks/${id}`, { method: 'DELETE', key }), 403, 'insufficient_scope')
    await expectProblem(await api(`/v1/webhooks/${id}/deliveries`, { key }), 403, 'insufficient_scope')
    await expectProblem(
      await api(`/v1/webhooks/${id}/deliveries/${id}/replay`, { method: 'POST', key }),
      403,
      'insufficient_scope',
    )
    await expectProblem(await api('/v1/webhooks'), 401, 'invalid_api_key')
  })

  it("answers 404 for another workspace's endpoint", async () => {
    const owner = await seedWorkspace()
    const other = await seedWorkspace()
    const { id } = await registerWebhook(owner.key, 'https://public.test/h')
    const key = other.key
    await expectProblem(await api(`/v1/webhooks/${id}`, { method: 'DELETE', key }), 404, 'webhook_endpoint_not_found')
    await expectProblem(await api(`/v1/webhooks/${id}/deliveries`, { key }), 404, 'webhook_endpoint_not_found')
    const replay = `/v1/webhooks/${id}/deliveries/${crypto.randomUUID()}/replay`
    await expectProblem(await api(replay, { method: 'POST', key }), 404, 'webhook_endpoint_not_found')
    expect(((await (await api('/v1/webhooks', { key })).json()) as { endpoints: unknown[] }).endpoints).toEqual([])
    // The owner still has it; an unknown delivery is 404 too.
    await expectProblem(await api(replay, { method: 'POST', key: owner.key }), 404, 'webhook_delivery_not_found')
    await expectProblem(await api(`/v1/webhooks/not-a-uuid/deliveries`, { key: owner.key }), 400, 'invalid_input', 'id')
  })

  it('DELETE stops delivery at once, hides the endpoint and keeps its history', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const receiver = await newReceiver([{ status: 500 }])
    const endpoint = await registerWebhook(key, receiver.url)
    await publishEvent(env, jobEvent(workspaceId))
    await waitFor(async () => (await listDeliveries(key, endpoint.id))[0]?.status === 'retrying', 'retrying')
    await holdAlarm(endpoint.id)
    expect(await receiver.log()).toHaveLength(1)

    expect((await api(`/v1/webhooks/${endpoint.id}`, { method: 'DELETE', key })).status).toBe(204)
    expect((await api(`/v1/webhooks/${endpoint.id}`, { method: 'DELETE', key })).status).toBe(204)
    expect(((await (await api('/v1/webhooks', { key })).json()) as { endpoints: unknown[] }).endpoints).toEqual([])

    // The open delivery fails at once and no retry is left scheduled.
    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(false)
    expect(await receiver.log()).toHaveLength(1)
    const [delivery] = await listDeliveries(key, endpoint.id)
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 1,
      responseStatus: 500,
      lastError: 'endpoint disabled (deleted)',
      nextAttemptAt: null,
    })

    // New events are not even queued, and a replay is refused.
    await publishEvent(env, jobEvent(workspaceId))
    expect(await listDeliveries(key, endpoint.id)).toHaveLength(1)
    const replay = await api(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`, { method: 'POST', key })
    await expectProblem(replay, 400, 'invalid_input', 'endpointId')
  })

  it('checks the endpoint in D1 before every run, so a disabled endpoint gets nothing more', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const receiver = await newReceiver([{ status: 500 }])
    const endpoint = await registerWebhook(key, receiver.url)
    await publishEvent(env, jobEvent(workspaceId))
    await waitFor(async () => (await listDeliveries(key, endpoint.id))[0]?.status === 'retrying', 'retrying')
    await holdAlarm(endpoint.id)
    // As if DELETE had updated D1 but never reached the outbox.
    await env.DB.prepare("UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = 'deleted' WHERE id = ?")
      .bind(new Date().toISOString(), endpoint.id)
      .run()
    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(true)
    expect(await receiver.log()).toHaveLength(1)
    expect((await listDeliveries(key, endpoint.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'endpoint disabled (deleted)',
    })
  })
})

describe('webhook deliveries end to end', () => {
  it('delivers signed events for every job of a 10-image batch and one batch.completed', {
    timeout: testBudget(10),
  }, async () => {
    const { key } = await seedWorkspace()
    const all = await newReceiver()
    const batchOnly = await newReceiver()
    const endpoint = await registerWebhook(key, all.url)
    const batchEndpoint = await registerWebhook(key, batchOnly.url, ['image.batch.completed.v1'])

    const bytes = await fixtureBytes('astronaut.png')
    const uploads = []
    for (let i = 0; i < 10; i++) uploads.push(await uploadImage(key, bytes))
    const res = await api('/v1/batches', {
      method: 'POST',
      key,
      headers: { 'idempotency-key': crypto.randomUUID() },
      json: { uploadIds: uploads.map((u) => u.id), options: BINARY_MASK },
    })
    expect(res.status).toBe(202)
    const batch = (await res.json()) as { id: string; jobs: { id: string }[] }
    const jobIds = batch.jobs.map((j) => j.id).sort()
    expect(jobIds).toHaveLength(10)
    await waitFor(
      async () =>
        ((await (await api(`/v1/batches/${batch.id}`, { key })).json()) as { status: string }).status === 'complete',
      'the batch to complete',
      modelBudget(10),
    )

    // 10 created, 10 completed, 1 batch.completed. All are handed to the outbox by now but the last
    // job's completion (published just after the batch's); once each is delivered, nothing is open
    // and no alarm is set, so no duplicate can follow, however slow the machine.
    await waitFor(
      async () => {
        const list = await listDeliveries(key, endpoint.id)
        return list.length >= 21 && list.every((d) => d.status === 'delivered')
      },
      'every event to be delivered',
      60_000,
    )
    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(false)
    const deliveries = verifyAll(await all.log(), endpoint.secret)
    expect(deliveries.length).toBe(21)
    const ofType = (type: string) => deliveries.filter((d) => d.event.type === type)
    expect(
      ofType('image.job.completed.v1')
        .map((d) => d.event.data.jobId)
        .sort(),
    ).toEqual(jobIds)
    expect(
      ofType('image.job.created.v1')
        .map((d) => d.event.data.jobId)
        .sort(),
    ).toEqual(jobIds)
    expect(ofType('image.job.progress.v1')).toEqual([])
    const [completed, ...more] = ofType('image.batch.completed.v1')
    expect(more).toEqual([])
    expect(completed.event).toMatchObject({
      type: 'image.batch.completed.v1',
      aggregateId: batch.id,
      data: { batchId: batch.id, status: 'complete', total: 10, succeeded: 10, failed: 0, canceled: 0 },
    })
    for (const d of ofType('image.job.completed.v1')) {
      expect(d.event).toMatchObject({
        aggregateId: d.event.data.jobId,
        data: { status: 'succeeded', batchId: batch.id },
      })
      expect(Object.keys(d.event).sort()).toEqual([
        'aggregateId',
        'correlationId',
        'data',
        'id',
        'occurredAt',
        'type',
        'workspaceId',
      ])
    }
    // One delivery per event, each sent once, with its own id.
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(deliveries.length)
    const listed = await listDeliveries(key, endpoint.id)
    expect(listed).toHaveLength(deliveries.length)
    expect(listed.every((d) => d.status === 'delivered' && d.attempts === 1 && d.responseStatus === 200)).toBe(true)
    expect(listed.map((d) => d.id).sort()).toEqual(deliveries.map((d) => d.id).sort())

    // The filtered endpoint got exactly the batch event, signed with its own secret.
    const batchDeliveries = verifyAll(await batchOnly.log(), batchEndpoint.secret)
    expect(batchDeliveries.map((d) => d.event.id)).toEqual([completed.event.id])
  })

  it('retries 500, 500, 200 on alarms: exactly three attempts, then a replay with the same webhook-id', async () => {
    const { key } = await seedWorkspace()
    const receiver = await newReceiver([{ status: 500, body: 'down' }, { status: 500 }])
    const endpoint = await registerWebhook(key, receiver.url, ['image.job.completed.v1'])
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const res = await removal(key, { uploadId: upload.id, options: BINARY_MASK }, { wait: 8 })
    const job = await settled(res, { key })
    expect(job.status).toBe('succeeded')

    let [delivery] = await waitFor(async () => {
      const list = await listDeliveries(key, endpoint.id)
      return list[0]?.status === 'retrying' ? list : undefined
    }, 'the first attempt to be retrying')
    // From here on the test runs each retry itself.
    await holdAlarm(endpoint.id)
    expect(await receiver.log()).toHaveLength(1)
    ;[delivery] = await listDeliveries(key, endpoint.id)
    expect(delivery).toMatchObject({
      attempts: 1,
      responseStatus: 500,
      lastError: 'Expected 2xx but received 500',
      deliveredAt: null,
    })
    const gap = (d: typeof delivery) => Date.parse(d.nextAttemptAt!) - Date.parse(d.lastAttemptAt!)
    expect(gap(delivery)).toBe(5 * S)

    // The retry state is in storage: it survives every object being restarted.
    await abortAllDurableObjects()
    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(true)
    expect(await receiver.log()).toHaveLength(2)
    ;[delivery] = await listDeliveries(key, endpoint.id)
    expect(delivery).toMatchObject({ status: 'retrying', attempts: 2, responseStatus: 500 })
    expect(gap(delivery)).toBe(5 * MIN)

    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(true)
    const log = await receiver.log()
    expect(log).toHaveLength(3)
    ;[delivery] = await listDeliveries(key, endpoint.id)
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 3,
      responseStatus: 200,
      lastError: null,
      nextAttemptAt: null,
    })
    expect(delivery.deliveredAt).not.toBeNull()
    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(false)
    expect(await receiver.log()).toHaveLength(3)

    const verified = verifyAll(log, endpoint.secret)
    expect(new Set(verified.map((d) => d.id))).toEqual(new Set([delivery.id]))
    expect(verified[0].event).toMatchObject({
      type: 'image.job.completed.v1',
      aggregateId: job.id,
      data: { jobId: job.id },
    })
    expect(new Set(log.map((r) => r.body)).size).toBe(1) // retries send the same bytes

    const replay = await api(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`, { method: 'POST', key })
    expect(replay.status).toBe(202)
    expect(await replay.json()).toEqual({ id: delivery.id, status: 'pending' })
    const after = await waitFor(async () => {
      const l = await receiver.log()
      return l.length === 4 ? l : undefined
    }, 'the replay')
    expect(verifyWebhook(after[3].body, after[3].headers, endpoint.secret).id).toBe(delivery.id)
    await waitFor(async () => (await listDeliveries(key, endpoint.id))[0]?.status === 'delivered', 'delivered again')
    expect(await listDeliveries(key, endpoint.id)).toEqual([
      expect.objectContaining({ id: delivery.id, attempts: 4, status: 'delivered' }),
    ])
  })

  it('disables the endpoint when the receiver answers 410', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const receiver = await newReceiver([{ status: 410 }])
    const endpoint = await registerWebhook(key, receiver.url)
    await publishEvent(env, jobEvent(workspaceId))
    await waitFor(async () => (await listDeliveries(key, endpoint.id))[0]?.status === 'failed', 'the 410')
    const [delivery] = await listDeliveries(key, endpoint.id)
    expect(delivery).toMatchObject({ attempts: 1, responseStatus: 410, nextAttemptAt: null })
    expect(delivery.lastError).toMatch(/410 Gone/)

    const listed = (await (await api('/v1/webhooks', { key })).json()) as { endpoints: Record<string, unknown>[] }
    expect(listed.endpoints).toEqual([expect.objectContaining({ id: endpoint.id, disabledReason: 'gone' })])
    expect(listed.endpoints[0].disabledAt).toEqual(expect.any(String))

    // A disabled endpoint is not even queued for: nothing open, no alarm, nothing more sent.
    await publishEvent(env, jobEvent(workspaceId))
    expect(await listDeliveries(key, endpoint.id)).toHaveLength(1)
    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(false)
    expect(await receiver.log()).toHaveLength(1)
    const replay = await api(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`, { method: 'POST', key })
    await expectProblem(replay, 400, 'invalid_input', 'endpointId')
    // Deleting it now hides it from the list.
    expect((await api(`/v1/webhooks/${endpoint.id}`, { method: 'DELETE', key })).status).toBe(204)
    expect(((await (await api('/v1/webhooks', { key })).json()) as { endpoints: unknown[] }).endpoints).toEqual([])
  })

  it('stores an event once however often it is published', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const receiver = await newReceiver()
    const endpoint = await registerWebhook(key, receiver.url)
    const event = jobEvent(workspaceId)
    await Promise.all([publishEvent(env, event), publishEvent(env, event)])
    await publishEvent(env, event)
    await waitFor(async () => (await listDeliveries(key, endpoint.id))[0]?.status === 'delivered', 'delivery')
    // Delivered and nothing else open (no alarm set): no second send can follow.
    expect(await runDurableObjectAlarm(outbox(endpoint.id))).toBe(false)
    expect(await listDeliveries(key, endpoint.id)).toHaveLength(1)
    expect(await receiver.log()).toHaveLength(1)
    // Progress is never sent to webhooks, even when published.
    await publishEvent(env, jobEvent(workspaceId, 'image.job.progress.v1'))
    expect(await listDeliveries(key, endpoint.id)).toHaveLength(1)
  })

  it('honours a Retry-After later than the schedule and does not follow redirects', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const elsewhere = await newReceiver()
    const receiver = await newReceiver([
      { status: 503, headers: { 'retry-after': '120' } },
      { status: 302, headers: { location: elsewhere.url } },
    ])
    const endpoint = await registerWebhook(key, receiver.url)
    await publishEvent(env, jobEvent(workspaceId))
    let [delivery] = await waitFor(async () => {
      const list = await listDeliveries(key, endpoint.id)
      return list[0]?.status === 'retrying' ? list : undefined
    }, 'retrying')
    expect(delivery).toMatchObject({ responseStatus: 503, lastError: 'Expected 2xx but received 503' })
    expect(Date.parse(delivery.nextAttemptAt!) - Date.parse(delivery.lastAttemptAt!)).toBe(120 * S)

    await runDurableObjectAlarm(outbox(endpoint.id))
    ;[delivery] = await listDeliveries(key, endpoint.id)
    expect(delivery).toMatchObject({ status: 'retrying', attempts: 2, responseStatus: 302 })
    expect(delivery.lastError).toBe(
      `Expected 2xx but received 302; redirects are not followed (Location: ${elsewhere.url})`,
    )
    expect(await elsewhere.log()).toEqual([])
    await runDurableObjectAlarm(outbox(endpoint.id))
    expect((await listDeliveries(key, endpoint.id))[0]).toMatchObject({ status: 'delivered', attempts: 3 })
  })
})

describe('webhook building blocks', () => {
  it('the outbox creates its deliveries table with the columns its drizzle schema (and so its row type) declares', async () => {
    const created = await runInDurableObject(outbox(crypto.randomUUID()), async (_instance, state) =>
      state.storage.sql
        .exec<{ name: string; notnull: number; pk: number }>(
          'SELECT name, "notnull", pk FROM pragma_table_info(\'deliveries\')',
        )
        .toArray()
        .map((c) => ({ name: c.name, notNull: c.notnull === 1 || c.pk === 1 })),
    )
    const declared = Object.values(getTableColumns(deliveries)).map((c) => ({ name: c.name, notNull: c.notNull }))
    expect(created).toEqual(declared)
  })

  it('retries on the DESIGN.md schedule and stops 24 h after the first attempt', () => {
    const t0 = Date.UTC(2026, 0, 1)
    const times = [t0]
    for (let n = 1; ; n++) {
      const next = nextAttemptAt(n, t0, times[times.length - 1])
      if (next === null) break
      times.push(next)
    }
    expect(times.map((t) => t - t0)).toEqual([
      0,
      5 * S,
      5 * S + 5 * MIN,
      5 * S + 35 * MIN,
      5 * S + 2 * H + 35 * MIN,
      5 * S + 7 * H + 35 * MIN,
      5 * S + 17 * H + 35 * MIN,
      24 * H,
    ])
    // Retry-After later than the schedule wins; earlier does not; never past the window.
    expect(nextAttemptAt(1, t0, t0, 60 * S)).toBe(t0 + 60 * S)
    expect(nextAttemptAt(3, t0, t0, 1 * S)).toBe(t0 + 30 * MIN)
    expect(nextAttemptAt(2, t0, t0 + 20 * H, 10 * H)).toBe(t0 + 24 * H)
  })

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 12)
    expect(parseRetryAfter('120', now)).toBe(120 * S)
    expect(parseRetryAfter(new Date(now + 90 * S).toUTCString(), now)).toBe(90 * S)
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('soon', now)).toBeUndefined()
    expect(parseRetryAfter(null, now)).toBeUndefined()
  })

  it('encrypts secrets bound to their endpoint', async () => {
    const sealed = await encryptSecret(env.DATA_ENCRYPTION_KEY, 'whsec_abc', 'endpoint-1')
    expect(sealed).toMatch(/^[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(await decryptSecret(env.DATA_ENCRYPTION_KEY, sealed, 'endpoint-1')).toBe('whsec_abc')
    await expect(decryptSecret(env.DATA_ENCRYPTION_KEY, sealed, 'endpoint-2')).rejects.toThrow()
    await expect(encryptSecret('too-short', 'x', 'y')).rejects.toThrow(/DATA_ENCRYPTION_KEY/)
  })

  it("signs what the doc's verifier checks, and the verifier refuses tampering and stale timestamps", async () => {
    const secret = 'whsec_test'
    const id = crypto.randomUUID()
    const body = JSON.stringify({ id: 'e', type: 'image.job.completed.v1', data: { n: 'ü' } })
    const now = Date.now()
    const timestamp = Math.floor(now / 1000)
    const signature = await signDelivery(secret, timestamp, id, body)
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }
    expect(verifyWebhook(body, new Headers(headers), secret, now)).toEqual({ id, event: JSON.parse(body) })
    expect(() => verifyWebhook(`${body} `, headers, secret, now)).toThrow('bad webhook signature')
    expect(() => verifyWebhook(body, headers, 'whsec_other', now)).toThrow('bad webhook signature')
    expect(() => verifyWebhook(body, { ...headers, 'webhook-id': crypto.randomUUID() }, secret, now)).toThrow(
      'bad webhook signature',
    )
    const later = now + (TOLERANCE_SECONDS + 1) * 1000
    expect(() => verifyWebhook(body, headers, secret, later)).toThrow('stale webhook timestamp')
    expect(() => verifyWebhook(body, { ...headers, 'webhook-signature': 'abc' }, secret, now)).toThrow('malformed')
  })

  it('guardedPost checks the URL first, sends one POST and returns redirects unfollowed', async () => {
    const resolver = {
      resolve: vi.fn(async (host: string) => (host === 'public.test' ? ['93.184.216.34'] : ['10.0.0.7'])),
    }
    const fetchImpl = vi.fn(async () => new Response(null, { status: 307, headers: { location: 'http://10.0.0.7/' } }))
    const opts = { resolver, allowlist: [], headers: { 'webhook-id': 'd1' }, body: '{"a":1}', fetchImpl }
    await expect(guardedPost('https://internal.example/h', opts)).rejects.toBeInstanceOf(UnsafeUrlError)
    await expect(guardedPost('http://[::1]/h', opts)).rejects.toBeInstanceOf(UnsafeUrlError)
    expect(fetchImpl).not.toHaveBeenCalled()
    const res = await guardedPost('https://public.test/h', opts)
    expect(res.status).toBe(307)
    expect(fetchImpl).toHaveBeenCalledTimes(1)
    expect(fetchImpl.mock.calls[0]).toEqual([
      'https://public.test/h',
      expect.objectContaining({ method: 'POST', body: '{"a":1}', redirect: 'manual', headers: { 'webhook-id': 'd1' } }),
    ])
    const failing = vi.fn(async () => {
      throw new Error('connection refused')
    })
    const err = await guardedPost('https://public.test/h', { ...opts, fetchImpl: failing }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SourceFetchError)
    expect((err as Error).message).toBe('Could not POST to https://public.test/h: connection refused')
  })

  it('docs/webhooks.md quotes the tested verifier verbatim', () => {
    expect(verifierSource).toContain('timingSafeEqual')
    expect(webhooksDoc).toContain(`\`\`\`js\n${verifierSource}\`\`\``)
  })
})
