import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { nextPeriodEnd } from '../../src/lib/window'
import {
  expectProblem,
  fixtureBytes,
  RAW_CUTOUT,
  modelBudget,
  removal,
  seedWorkspace,
  testBudget,
  uploadImage,
  usage,
  waitForJobs,
} from './helpers'

describe('credits', () => {
  /** Marks the workspace's credits all used in a period that ended an hour ago. */
  async function spentLastPeriod(workspaceId: string, used: number) {
    await env.DB.prepare('UPDATE credit_accounts SET used = ?, period_ends_at = ? WHERE workspace_id = ?')
      .bind(used, new Date(Date.now() - 3_600_000).toISOString(), workspaceId)
      .run()
  }

  it('a period that has ended renews when the balance is read: used 0, the end on the first of next month', async () => {
    const { key, workspaceId } = await seedWorkspace({ credits: 2 })
    await spentLastPeriod(workspaceId, 2)
    expect(await usage(key)).toMatchObject({ limit: 2, held: 0, used: 0, available: 2, periodEndsAt: nextPeriodEnd() })
  })

  it('a period that has ended renews when a job is accepted: 202 instead of 402, and the credit is held', async () => {
    const { key, workspaceId } = await seedWorkspace({ credits: 1 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    await spentLastPeriod(workspaceId, 1)
    const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
    expect(res.status).toBe(202)
    await waitForJobs(key, [((await res.json()) as { id: string }).id], modelBudget(1))
    expect(await usage(key)).toMatchObject({ limit: 1, held: 0, used: 1, available: 0, periodEndsAt: nextPeriodEnd() })
    // The new period's credit is spent: the next one is refused until that period ends.
    await expectProblem(await removal(key, { uploadId: upload.id, options: RAW_CUTOUT }), 402, 'quota_exhausted')
  })

  it('402 quota_exhausted when nothing is left, with nothing held', async () => {
    const { key } = await seedWorkspace({ credits: 0 })
    const res = await removal(key, { uploadId: crypto.randomUUID(), options: RAW_CUTOUT })
    const body = await expectProblem(res, 402, 'quota_exhausted')
    expect(body.retryable).toBe(false)
    expect(await usage(key)).toMatchObject({ limit: 0, held: 0, used: 0, available: 0 })
  })

  it('20 concurrent removals against 10 credits: exactly 10 accepted, then held 0 and used 10', {
    timeout: testBudget(10),
  }, async () => {
    const { key } = await seedWorkspace({ credits: 10 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => removal(key, { uploadId: upload.id, options: RAW_CUTOUT })),
    )
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 202)).toHaveLength(10)
    expect(statuses.filter((s) => s === 402)).toHaveLength(10)
    for (const res of responses.filter((r) => r.status === 402)) await expectProblem(res, 402, 'quota_exhausted')
    const accepted = await Promise.all(
      responses.filter((r) => r.status === 202).map((r) => r.json() as Promise<{ id: string }>),
    )
    const during = await usage(key)
    expect(during.held + during.used).toBe(10)
    const ids = accepted.map((j) => j.id)
    const ended = await waitForJobs(key, ids, modelBudget(10))
    expect(ended.map((j) => j.status)).toEqual(Array(10).fill('succeeded'))
    expect(await usage(key)).toMatchObject({ held: 0, used: 10, available: 0 })
  })
})
