/**
 * The `low_confidence` warning through the public API (issue 31): a removal of a made photo whose
 * subject fades into the background (the stub segmenter, like any model, can only be unsure of
 * it) succeeds with the warning in `warnings`; a plain subject with crisp edges gets none.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { api, RAW_CUTOUT, seedWorkspace, waitForStatus } from './helpers'

async function removalOf(kind: 'plain' | 'faded') {
  const { key } = await seedWorkspace()
  const sourceUrl = `${env.FIXTURE_ORIGIN}/generated/subject-${kind}.png`
  // Drawn by the fixture server on first use, which takes longer than a source URL may (1 s).
  await (await fetch(sourceUrl)).arrayBuffer()
  const res = await api('/v1/removals', {
    method: 'POST',
    key,
    json: { sourceUrl, options: RAW_CUTOUT },
    headers: { 'idempotency-key': crypto.randomUUID() },
  })
  expect(res.status, await res.clone().text()).toBe(202)
  const { id } = (await res.json()) as { id: string }
  return waitForStatus(key, id, ['succeeded', 'failed'], 120_000)
}

describe('low_confidence', () => {
  it('warns on a removal whose mask is unsure, and says why', async () => {
    const job = await removalOf('faded')
    expect(job).toMatchObject({ status: 'succeeded' })
    expect(job.warnings).toEqual([{ code: 'low_confidence', message: expect.stringMatching(/^The mask is uncertain/) }])
  }, 180_000)

  it('does not warn on a plain subject with crisp edges', async () => {
    expect(await removalOf('plain')).toMatchObject({ status: 'succeeded', warnings: [] })
  }, 180_000)
})
