import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import {
  api,
  expectProblem,
  fixtureBytes,
  modelBudget,
  RAW_CUTOUT,
  seedWorkspace,
  setInferenceMode,
  sleep,
  testBudget,
  uploadImage,
  usage,
  waitFor,
  waitForStatus,
} from './helpers'

type Batch = {
  id: string
  status: string
  total: number
  jobs: { id: string; status: string; startedAt?: string; completedAt?: string }[]
}

function postBatch(key: string, body: unknown, idempotencyKey: string = crypto.randomUUID()) {
  return api('/v1/batches', { method: 'POST', key, json: body, headers: { 'idempotency-key': idempotencyKey } })
}

async function waitForBatch(key: string, id: string, timeoutMs: number): Promise<Batch> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const batch = (await (await api(`/v1/batches/${id}`, { key })).json()) as Batch
    if (batch.status === 'complete') return batch
    if (Date.now() > deadline) {
      const states = batch.jobs.map((j) => j.status).join(', ')
      throw new Error(`batch ${id} still ${batch.status} after ${timeoutMs} ms: ${states}`)
    }
    await sleep(200)
  }
}

async function jobCount(workspaceId: string) {
  return (await env.DB.prepare('SELECT COUNT(*) AS n FROM jobs WHERE workspace_id = ?')
    .bind(workspaceId)
    .first<{ n: number }>())!.n
}

describe('POST /v1/batches', () => {
  it('400 for 0 or 101 ids, naming the field', async () => {
    const { key } = await seedWorkspace()
    const ids = Array.from({ length: 101 }, () => crypto.randomUUID())
    await expectProblem(
      await postBatch(key, { uploadIds: ids, options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'uploadIds',
    )
    await expectProblem(await postBatch(key, { uploadIds: [], options: RAW_CUTOUT }), 400, 'invalid_input', 'uploadIds')
    await expectProblem(
      await postBatch(key, { uploadIds: ['nope'], options: RAW_CUTOUT }),
      400,
      'invalid_input',
      'uploadIds.0',
    )
  })

  it('accepts exactly 100: 202 with 100 queued jobs and 100 credits held, all released on cancel', async () => {
    const { key } = await seedWorkspace({ credits: 100 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    // A saturated server keeps them queued, so no model runs; each is then canceled.
    await setInferenceMode('saturated')
    try {
      const res = await postBatch(key, { uploadIds: Array(100).fill(upload.id), options: RAW_CUTOUT })
      expect(res.status).toBe(202)
      const batch = (await res.json()) as Batch
      expect(batch).toMatchObject({ status: 'processing', total: 100 })
      expect(batch.jobs).toHaveLength(100)
      expect(await usage(key)).toMatchObject({ held: 100, available: 0 })
      for (const job of batch.jobs)
        expect((await api(`/v1/jobs/${job.id}`, { method: 'DELETE', key })).status).toBe(200)
      expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 100 })
    } finally {
      await setInferenceMode('normal')
    }
  })

  it('400 naming the first upload that is not ready, and nothing queued', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const ready = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const pending = (await (await api('/v1/uploads', { method: 'POST', key })).json()) as { id: string }
    const res = await postBatch(key, { uploadIds: [ready.id, pending.id, ready.id], options: RAW_CUTOUT })
    await expectProblem(res, 400, 'invalid_input', 'uploadIds.1')
    expect(await jobCount(workspaceId)).toBe(0)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
  })

  it('402 when credits cover 5 of 10, with nothing queued and held unchanged', async () => {
    const { key, workspaceId } = await seedWorkspace({ credits: 5 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const res = await postBatch(key, { uploadIds: Array(10).fill(upload.id), options: RAW_CUTOUT })
    await expectProblem(res, 402, 'quota_exhausted')
    expect(await jobCount(workspaceId)).toBe(0)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 5 })
    const batches = await env.DB.prepare('SELECT COUNT(*) AS n FROM batches WHERE workspace_id = ?')
      .bind(workspaceId)
      .first<{ n: number }>()
    expect(batches!.n).toBe(0)
  })

  it('the same Idempotency-Key twice makes one batch', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const idem = crypto.randomUUID()
    const first = await postBatch(key, { uploadIds: [upload.id, upload.id], options: RAW_CUTOUT }, idem)
    expect(first.status).toBe(202)
    const second = await postBatch(key, { uploadIds: [upload.id, upload.id], options: RAW_CUTOUT }, idem)
    expect(second.status).toBe(202)
    const a = (await first.json()) as Batch
    expect(((await second.json()) as Batch).id).toBe(a.id)
    expect(first.headers.get('location')).toBe(`/v1/batches/${a.id}`)
    expect(await jobCount(workspaceId)).toBe(2)
    await expectProblem(
      await postBatch(key, { uploadIds: [upload.id], options: RAW_CUTOUT }, idem),
      409,
      'idempotency_conflict',
    )
    const done = await waitForBatch(key, a.id, modelBudget(2))
    expect(done.jobs.map((j) => j.status)).toEqual(['succeeded', 'succeeded'])
  })

  it('runs every job, completes, and keeps successes when a child ends otherwise', {
    timeout: testBudget(3),
  }, async () => {
    const { key } = await seedWorkspace({ credits: 10 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const res = await postBatch(key, { uploadIds: Array(4).fill(upload.id), options: RAW_CUTOUT })
    const batch = (await res.json()) as Batch
    expect(batch).toMatchObject({ status: 'processing', total: 4 })
    expect(batch.jobs).toHaveLength(4)
    // Cancel the last child while it still waits for a slot (the slot limit is 2 in tests).
    const last = batch.jobs[3]
    expect((await api(`/v1/jobs/${last.id}`, { method: 'DELETE', key })).status).toBe(200)
    const done = await waitForBatch(key, batch.id, modelBudget(3))
    expect(done.jobs.map((j) => j.status).sort()).toEqual(['canceled', 'succeeded', 'succeeded', 'succeeded'])
    const listed = (await (await api(`/v1/jobs?batchId=${batch.id}`, { key })).json()) as { jobs: unknown[] }
    expect(listed.jobs).toHaveLength(4)
    expect(await usage(key)).toMatchObject({ held: 0, used: 3 })
    const other = await seedWorkspace()
    await expectProblem(await api(`/v1/batches/${batch.id}`, { key: other.key }), 404, 'batch_not_found')
  })
})

describe('a batch with a failed child', () => {
  it('completes with the failure beside the successes: the failed credit released, the rest charged', {
    timeout: testBudget(3),
  }, async () => {
    const { key } = await seedWorkspace({ credits: 10 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    // The first removal to reach the server fails there (processing_failed); the others run.
    await setInferenceMode('fail-next-remove')
    let done: Batch
    try {
      const res = await postBatch(key, { uploadIds: Array(3).fill(upload.id), options: RAW_CUTOUT })
      expect(res.status).toBe(202)
      done = await waitForBatch(key, ((await res.json()) as Batch).id, modelBudget(3))
    } finally {
      await setInferenceMode('normal')
    }
    expect(done.jobs.map((j) => j.status).sort()).toEqual(['failed', 'succeeded', 'succeeded'])
    const failed = done.jobs.find((j) => j.status === 'failed')!
    const job = (await (await api(`/v1/jobs/${failed.id}`, { key })).json()) as { error: { code: string } }
    expect(job.error.code).toBe('processing_failed')
    expect(await usage(key)).toMatchObject({ held: 0, used: 2, available: 8 })
  })
})

describe('fair scheduling', () => {
  it('with 2 slots per workspace, B’s single job starts before A’s 20-job batch finishes', {
    timeout: testBudget(21),
  }, async () => {
    const a = await seedWorkspace({ credits: 20 })
    const b = await seedWorkspace({ credits: 1 })
    const uploadA = await uploadImage(a.key, await fixtureBytes('astronaut.png'))
    const uploadB = await uploadImage(b.key, await fixtureBytes('astronaut.png'))
    const batch = (await (
      await postBatch(a.key, { uploadIds: Array(20).fill(uploadA.id), options: RAW_CUTOUT })
    ).json()) as Batch
    // Watch A's slots for the whole run: never more than 2 running.
    const slots = env.WORKSPACE.get(env.WORKSPACE.idFromName(a.workspaceId))
    let watching = true
    let mostRunning = 0
    const watcher = (async () => {
      while (watching) {
        mostRunning = Math.max(mostRunning, (await slots.snapshot()).running.length)
        await sleep(100)
      }
    })()
    try {
      // B comes once A's batch holds both of its slots, with 18 of its jobs waiting.
      await waitFor(async () => (await slots.snapshot()).running.length === 2, "A's batch to fill its 2 slots")
      const resB = await api('/v1/removals', {
        method: 'POST',
        key: b.key,
        json: { uploadId: uploadB.id, options: RAW_CUTOUT },
        headers: { 'idempotency-key': crypto.randomUUID() },
      })
      expect(resB.status, await resB.clone().text()).toBe(202)
      const jobB = (await resB.json()) as { id: string }
      // B waits at most for the runs already at the inference server (one runs, two may queue).
      const finishedB = await waitForStatus(b.key, jobB.id, ['succeeded', 'failed'], modelBudget(3))
      expect(finishedB.status).toBe('succeeded')
      const done = await waitForBatch(a.key, batch.id, modelBudget(21))
      const lastA = Math.max(...done.jobs.map((j) => Date.parse(j.completedAt!)))
      expect(Date.parse(finishedB.startedAt!)).toBeLessThan(lastA)
      const startedAfterB = done.jobs.filter((j) => Date.parse(j.startedAt!) > Date.parse(finishedB.startedAt!))
      expect(startedAfterB.length).toBeGreaterThan(10)
      expect(await usage(a.key)).toMatchObject({ held: 0, used: 20 })
    } finally {
      watching = false
      await watcher
    }
    expect(mostRunning).toBe(2)
  })
})
