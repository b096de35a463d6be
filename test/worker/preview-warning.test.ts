import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { api, fixtureBytes, RAW_CUTOUT, seedWorkspace, TERMINAL, waitForStatus } from './helpers'

type JobView = { id: string; status: string; warnings: { code: string; message: string }[] }

/** Polls a job as the device that made it, until it is terminal. */
async function settle(jobId: string, headers: Record<string, string>, timeoutMs = 240_000): Promise<JobView> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const job = (await (await api(`/v1/jobs/${jobId}`, { headers })).json()) as JobView
    if (TERMINAL.includes(job.status) || Date.now() > deadline) return job
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe('preview warnings', () => {
  it('an anonymous preview of a 12 MP photo says it was downscaled, naming both sizes', async () => {
    const ip = `198.51.100.${1 + Math.floor(Math.random() * 250)}`
    const res = await api('/v1/removals', {
      method: 'POST',
      json: { sourceUrl: `${env.FIXTURE_ORIGIN}/generated/photo-12mp.jpg`, options: RAW_CUTOUT },
      headers: { 'idempotency-key': crypto.randomUUID(), 'cf-connecting-ip': ip },
    })
    expect(res.status, await res.clone().text()).toBe(202)
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]
    const { id } = (await res.json()) as { id: string }
    const job = await settle(id, { cookie, 'cf-connecting-ip': ip })
    expect(job.status).toBe('succeeded')
    expect(job.warnings).toHaveLength(1)
    expect(job.warnings[0].code).toBe('preview_downscaled')
    expect(job.warnings[0].message).toMatch(/^Preview scaled from 4000×3000 to \d+×\d+;/)
  }, 300_000)

  it('a signed-in removal at full size carries no warning', async () => {
    const { key } = await seedWorkspace()
    const form = new FormData()
    form.set('image', new File([await fixtureBytes('astronaut.png')], 'a.png', { type: 'image/png' }))
    form.set('options', JSON.stringify(RAW_CUTOUT))
    const res = await api('/v1/removals', {
      method: 'POST',
      key,
      body: form,
      headers: { 'idempotency-key': crypto.randomUUID() },
    })
    const { id } = (await res.json()) as { id: string }
    expect(await waitForStatus(key, id, ['succeeded', 'failed'], 240_000)).toMatchObject({
      status: 'succeeded',
      warnings: [],
    })
  }, 300_000)
})
