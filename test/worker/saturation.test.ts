/**
 * Back-pressure end to end: the test inference server runs one model run at a time with one
 * request waiting (test/helpers/inference-process.ts), so eight removals submitted at once drive it
 * past its queue (its /health/ready says "saturated", its /v1/remove answers 503 + Retry-After).
 * The edge must keep every job and retry it: all eight end `succeeded`, each charged once.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { fixtureBytes, inferenceStats, RAW_CUTOUT, removal, seedWorkspace, setInferenceMode, uploadImage, usage, waitForStatus } from './helpers'

const JOBS = 8

describe('a saturated inference server', () => {
  it('every concurrent job still ends succeeded, charged once, with nothing left held', async () => {
    await setInferenceMode('normal') // resets the proxy's call counter
    const { key } = await seedWorkspace({ credits: 20 })
    const bytes = await fixtureBytes('astronaut.png')
    const uploads = []
    for (let i = 0; i < JOBS; i++) uploads.push(await uploadImage(key, bytes))

    // Watch the server's own readiness while the jobs run (through the test proxy, unchanged).
    const seen = { saturated: 0, maxQueued: 0, polls: 0, slowest: 0 }
    let watching = true
    const watcher = (async () => {
      while (watching) {
        const t0 = Date.now()
        const res = await fetch(`${env.INFERENCE_URL}/health/ready`)
        seen.slowest = Math.max(seen.slowest, Date.now() - t0)
        const body = (await res.json()) as { status: string; queued?: number }
        seen.polls++
        if (body.status === 'saturated') {
          expect(res.status).toBe(503)
          expect(res.headers.get('retry-after')).toBe('1')
          seen.saturated++
        }
        seen.maxQueued = Math.max(seen.maxQueued, body.queued ?? 0)
        await new Promise((r) => setTimeout(r, 50))
      }
    })()

    const accepted = await Promise.all(uploads.map((u) => removal(key, { uploadId: u.id, options: RAW_CUTOUT })))
    const ids: string[] = []
    for (const res of accepted) {
      expect(res.status).toBe(202)
      ids.push(((await res.json()) as { id: string }).id)
    }
    expect((await usage(key)).held).toBeGreaterThan(0)

    // One model run at a time at ~1-3 s each on 2 shared cores: allow plenty.
    const finals = await Promise.all(ids.map((id) => waitForStatus(key, id, ['succeeded', 'failed', 'canceled'], 150_000)))
    watching = false
    await watcher
    expect(finals.map((j) => j.status)).toEqual(Array(JOBS).fill('succeeded'))
    expect(await usage(key)).toMatchObject({ held: 0, used: JOBS })
    // The server ran each removal once to completion; any calls beyond that were refused with 503.
    const { removeCalls } = await inferenceStats()
    expect(removeCalls).toBeGreaterThanOrEqual(JOBS)
    console.log(
      `${JOBS} jobs, ${removeCalls} removal calls reached the inference server (${removeCalls - JOBS} refused and retried); ` +
        `readiness polled ${seen.polls}×: saturated ${seen.saturated}×, at most ${seen.maxQueued} queued, slowest poll ${seen.slowest} ms`,
    )
    // The server was driven to its limit while the jobs ran (its one queue slot full).
    expect(seen.saturated).toBeGreaterThan(0)
  }, 180_000)
})
