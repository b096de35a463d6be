import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import {
  BINARY_MASK,
  expectProblem,
  fixtureBytes,
  modelBudget,
  RAW_CUTOUT,
  removal,
  seedWorkspace,
  TERMINAL,
  uploadImage,
  usage,
  waitForJobs,
  waitForStatus,
} from './helpers'

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and input, and creates one job', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const idempotencyKey = crypto.randomUUID()
    const first = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(first.status).toBe(202)
    const firstBody = await first.text()
    const second = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(second.status).toBe(202)
    expect(await second.text()).toBe(firstBody)
    expect(second.headers.get('location')).toBe(first.headers.get('location'))
    const { n } = (await env.DB.prepare('SELECT COUNT(*) AS n FROM jobs WHERE workspace_id = ?')
      .bind(workspaceId)
      .first<{ n: number }>())!
    expect(n).toBe(1)
    const u = await usage(key)
    expect(u.held + u.used).toBe(1)
    const { id } = JSON.parse(firstBody) as { id: string }
    expect((await waitForStatus(key, id, TERMINAL)).status).toBe('succeeded')
    expect(await usage(key)).toMatchObject({ held: 0, used: 1 })
  })

  it('409 idempotency_conflict for the same key with different input', async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const idempotencyKey = crypto.randomUUID()
    const first = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(first.status).toBe(202)
    const res = await removal(key, { uploadId: upload.id, options: BINARY_MASK }, { idempotencyKey })
    await expectProblem(res, 409, 'idempotency_conflict', 'Idempotency-Key')
    const { id } = (await first.json()) as { id: string }
    expect((await waitForStatus(key, id, TERMINAL)).status).toBe('succeeded')
  })

  it('keys are per workspace, and a failed request frees its key', async () => {
    const a = await seedWorkspace({ credits: 0 })
    const idempotencyKey = crypto.randomUUID()
    await expectProblem(
      await removal(a.key, { uploadId: crypto.randomUUID(), options: RAW_CUTOUT }, { idempotencyKey }),
      402,
      'quota_exhausted',
    )
    await env.DB.prepare('UPDATE credit_accounts SET credit_limit = 5 WHERE workspace_id = ?').bind(a.workspaceId).run()
    const upload = await uploadImage(a.key, await fixtureBytes('astronaut.png'))
    const resA = await removal(a.key, { uploadId: upload.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(resA.status).toBe(202)
    const b = await seedWorkspace()
    const uploadB = await uploadImage(b.key, await fixtureBytes('astronaut.png'))
    const resB = await removal(b.key, { uploadId: uploadB.id, options: RAW_CUTOUT }, { idempotencyKey })
    expect(resB.status).toBe(202)
    // Two jobs, one per workspace, both run.
    const [jobA, jobB] = (await Promise.all([resA.json(), resB.json()])) as { id: string }[]
    expect(jobA.id).not.toBe(jobB.id)
    const ended = await waitForJobs((i) => [a.key, b.key][i], [jobA.id, jobB.id], modelBudget(2))
    expect(ended.map((j) => j.status)).toEqual(['succeeded', 'succeeded'])
  })
})
