/**
 * Back-pressure end to end. The test inference server runs one model run at a time with two
 * requests waiting (test/helpers/inference-process.ts), and a workspace runs at most 2 jobs at once
 * in tests; so eight removals of one workspace plus one of another keep it full: its
 * `/health/ready` says "saturated" (503 + Retry-After) while they run. The edge must keep every job
 * queued until there is room: all of them end `succeeded`, each charged once, nothing left held.
 */
import { env } from 'cloudflare:test'
import { afterAll, describe, expect, it } from 'vitest'
import {
  fixtureBytes,
  inferenceStats,
  modelBudget,
  RAW_CUTOUT,
  removal,
  seedWorkspace,
  setInferenceMode,
  sleep,
  testBudget,
  uploadImage,
  usage,
  waitForJobs,
} from './helpers'

const JOBS = 8
/**
 * How long the edge gives the inference server's `/health/ready` (READY_TIMEOUT_MS in
 * src/services/inference.ts) before it counts the server as busy rather than ready.
 */
const EDGE_READY_TIMEOUT_MS = 5_000

describe('a saturated inference server', () => {
  // The files after this one run on the default stub server again.
  afterAll(() => setInferenceMode('normal'))

  it('every concurrent job still ends succeeded, charged once, with nothing left held', {
    timeout: testBudget(JOBS + 1),
  }, async () => {
    // The slow stub server (200 ms a run): at the default 50 ms the server is seen full too rarely.
    await setInferenceMode('slow') // also resets the proxy's call counter
    const a = await seedWorkspace({ credits: 20 })
    const b = await seedWorkspace({ credits: 5 })
    const bytes = await fixtureBytes('astronaut.png')
    const uploads = []
    for (let i = 0; i < JOBS; i++) uploads.push(await uploadImage(a.key, bytes))
    const uploadB = await uploadImage(b.key, bytes)

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
        await sleep(50)
      }
    })()

    let finals: { status: string }[]
    try {
      const accepted = await Promise.all([
        ...uploads.map((u) => removal(a.key, { uploadId: u.id, options: RAW_CUTOUT })),
        removal(b.key, { uploadId: uploadB.id, options: RAW_CUTOUT }),
      ])
      const ids: string[] = []
      for (const res of accepted) {
        expect(res.status).toBe(202)
        ids.push(((await res.json()) as { id: string }).id)
      }
      expect((await usage(a.key)).held).toBeGreaterThan(0)
      // One model run at a time, queued one after another.
      finals = await waitForJobs((i) => (i < JOBS ? a.key : b.key), ids, modelBudget(JOBS + 1))
    } finally {
      watching = false
      await watcher
    }
    const { removeCalls } = await inferenceStats()
    const summary =
      `${JOBS + 1} jobs, ${removeCalls} removal calls reached the inference server (${removeCalls - JOBS - 1} refused and retried); ` +
      `readiness polled ${seen.polls}×: saturated ${seen.saturated}×, at most ${seen.maxQueued} queued, slowest poll ${seen.slowest} ms`
    expect(
      finals.map((j) => j.status),
      summary,
    ).toEqual(Array(JOBS + 1).fill('succeeded'))
    expect(await usage(a.key)).toMatchObject({ held: 0, used: JOBS })
    expect(await usage(b.key)).toMatchObject({ held: 0, used: 1 })
    // The server was full while the jobs ran, and it kept answering its health check meanwhile,
    // within the time the edge gives that check (the model runs off its event loop; how fast it
    // answers on an idle machine is inference-server/test/server.test.ts's business).
    expect(seen.saturated, summary).toBeGreaterThan(0)
    expect(seen.slowest, summary).toBeLessThan(EDGE_READY_TIMEOUT_MS)
  })
})
