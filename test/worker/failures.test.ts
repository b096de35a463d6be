import { env } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  api,
  expectProblem,
  fixtureBytes,
  inferenceStats,
  RAW_CUTOUT,
  removal,
  seedWorkspace,
  setInferenceMode,
  TERMINAL,
  uploadImage,
  usage,
  waitFor,
  waitForStatus,
} from './helpers'
import { createProject, jobEnded, succeededRemoval } from './project-helpers'

/**
 * The Worker's bindings. The tests and the Worker (its Durable Objects included) share this one
 * object, so a binding set here holds for the Worker too; `setBindings` keeps the old value and
 * `afterEach` puts it back, so the suite's generous deadlines apply to every other test.
 */
const bindings = env as unknown as Record<string, string | undefined>
const savedBindings = new Map<string, string | undefined>()

function setBindings(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!savedBindings.has(name)) savedBindings.set(name, bindings[name])
    bindings[name] = value
  }
}

afterEach(async () => {
  for (const [name, value] of savedBindings) bindings[name] = value
  savedBindings.clear()
  await setInferenceMode('normal')
})

describe('when the inference server is unavailable', () => {
  it('503 processor_unavailable at accept, with Retry-After and nothing held', async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    await setInferenceMode('down')
    const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
    const body = await expectProblem(res, 503, 'processor_unavailable')
    expect(body.retryable).toBe(true)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0 })
    const ready = await api('/health/ready')
    expect(ready.status).toBe(503)
    expect(await ready.json()).toMatchObject({ status: 'unavailable', checks: { d1: 'ok', inference: 'unavailable' } })
  })

  it('a job whose inference server dies mid-job ends failed and its hold is released', async () => {
    const { key } = await seedWorkspace({ credits: 5 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    await setInferenceMode('die-on-remove')
    const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
    expect(res.status).toBe(202)
    const job = (await res.json()) as { id: string }
    const final = await waitForStatus(key, job.id, TERMINAL)
    expect(final).toMatchObject({ status: 'failed', error: { code: 'processor_unavailable' }, result: null })
    // Readiness is asked once per job: the accept's answer starts the first attempt, and each of
    // the two retries asks again (it goes where a server answers ready now).
    expect(await inferenceStats()).toMatchObject({ removeCalls: 3, readyChecks: 3 })
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 5 })
    const events = await (await api(`/v1/jobs/${job.id}/events`, { key })).text()
    expect(events).toContain('event: image.job.failed.v1')
  })

  it('a job whose server reports its work failed ends processing_failed at once, with its hold released', async () => {
    const { key } = await seedWorkspace({ credits: 5 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    await setInferenceMode('fail-next-remove')
    const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
    expect(res.status).toBe(202)
    const job = (await res.json()) as { id: string }
    const final = await waitForStatus(key, job.id, TERMINAL)
    expect(final).toMatchObject({
      status: 'failed',
      error: { code: 'processing_failed', message: 'the model run failed (fail-next-remove)' },
      result: null,
    })
    expect((await inferenceStats()).removeCalls, 'not retried: the failure is not a lost server').toBe(1)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 5 })
    const events = await (await api(`/v1/jobs/${job.id}/events`, { key })).text()
    expect(events).toContain('event: image.job.failed.v1')
  })

  it('a saturated server keeps the job queued, never lost, and it succeeds once capacity returns', async () => {
    const { key } = await seedWorkspace({ credits: 5 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    await setInferenceMode('saturated')
    const job = (await (await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })).json()) as { id: string }
    // Told "saturated" again and again (accept's own readiness check was the first), it stays queued.
    await waitFor(async () => (await inferenceStats()).saturatedAnswers >= 4, 'the job to be told saturated')
    expect(await (await api(`/v1/jobs/${job.id}`, { key })).json()).toMatchObject({ status: 'queued' })
    await setInferenceMode('normal')
    const final = await waitForStatus(key, job.id, TERMINAL)
    expect(final.status).toBe('succeeded')
    expect(await usage(key)).toMatchObject({ held: 0, used: 1 })
  })
})

// A frozen server (SIGSTOP, a wedged process) still has its socket accepted by the kernel and
// never answers. Readiness that does not answer within INFERENCE_READY_TIMEOUT_MS counts as down:
// 1 s here (the production 5 s, waited out on every attempt, made these tests the slowest of the
// file; the stub segmenter answers readiness in milliseconds). A call in flight is aborted at its
// deadline, which the last tests shorten for themselves; test/e2e/faults.test.ts does the same
// against a real SIGSTOPped server.
describe('when the inference server is frozen (connections accepted, nothing answered)', () => {
  beforeEach(() => setBindings({ INFERENCE_READY_TIMEOUT_MS: '1000' }))

  it('/health/ready says unavailable and a new removal is 503, nothing held', async () => {
    const { key } = await seedWorkspace({ credits: 3 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    await setInferenceMode('frozen')
    const ready = await api('/health/ready')
    expect(ready.status).toBe(503)
    expect(await ready.json()).toMatchObject({ status: 'unavailable', checks: { d1: 'ok', inference: 'unavailable' } })
    const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
    const body = await expectProblem(res, 503, 'processor_unavailable')
    expect(body.retryable).toBe(true)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
    expect((await inferenceStats()).frozenRequests).toBeGreaterThanOrEqual(2)
  })

  it('a waiting job fails processor_unavailable instead of waiting for as long as it hangs', async () => {
    const { key } = await seedWorkspace({ credits: 3 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    // Accepted while the server says "busy", so the job is queued and keeps asking.
    await setInferenceMode('saturated')
    const job = (await (await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })).json()) as { id: string }
    await waitFor(async () => (await inferenceStats()).saturatedAnswers >= 2, 'the job to be told saturated')
    expect((await usage(key)).held).toBe(1)
    await setInferenceMode('frozen')
    // A busy server may keep a job waiting up to 15 minutes; a frozen one spends its attempts.
    const final = await waitForStatus(key, job.id, TERMINAL)
    expect(final).toMatchObject({ status: 'failed', error: { code: 'processor_unavailable' }, result: null })
    // No call was ever made, so there is no earlier cause to report.
    expect(final.error?.message).toBe('No inference server is available')
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
  })

  /**
   * A removal (3 credits) whose server freezes once the call reaches it, with a call deadline of
   * 1 s + 1 ms per megapixel (the 0.26 MP photo counts as one): 1001 ms. Resolves once the call is
   * in, with readiness checks shortened: from then on they hang too, and should give up sooner.
   */
  async function removalFrozenMidCall() {
    const { key } = await seedWorkspace({ credits: 3 })
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    setBindings({ INFERENCE_DEADLINE_BASE_MS: '1000', INFERENCE_DEADLINE_PER_MP_MS: '1' })
    await setInferenceMode('freeze-on-remove')
    const res = await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })
    expect(res.status).toBe(202)
    const job = (await res.json()) as { id: string }
    await waitFor(async () => (await inferenceStats()).removeCalls >= 1, 'the call to reach the server')
    setBindings({ INFERENCE_READY_TIMEOUT_MS: '500' })
    return { key, job }
  }

  it('a job whose server froze during its call fails with the call deadline as its cause', async () => {
    const { key, job } = await removalFrozenMidCall()
    const final = await waitForStatus(key, job.id, TERMINAL)
    expect(final).toMatchObject({ status: 'failed', error: { code: 'processor_unavailable' }, result: null })
    // The first cause, not only what the retries found ("No inference server is available").
    expect(final.error?.message).toBe(
      "The inference server did not answer within the call's deadline of 1001 ms; no inference server was ready after that",
    )
    const stats = await inferenceStats()
    expect(stats.removeCalls, 'the retries found no server ready and made no other call').toBe(1)
    expect(stats.frozenRequests, 'the call and the retries readiness checks').toBe(Number(env.INFERENCE_MAX_ATTEMPTS))
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
  })

  it('a job whose call passed its deadline and whose retries then lost the server names both causes', async () => {
    const { key, job } = await removalFrozenMidCall()
    // The retry's readiness check arrives only once the call's deadline has passed. Then the server
    // answers readiness again but drops every removal mid-way, as a server that keeps crashing.
    await waitFor(async () => (await inferenceStats()).frozenRequests >= 2, 'the retry after the deadline')
    await setInferenceMode('die-on-remove')
    const final = await waitForStatus(key, job.id, TERMINAL)
    expect(final).toMatchObject({ status: 'failed', error: { code: 'processor_unavailable' }, result: null })
    expect(final.error?.message).toMatch(
      /^No inference server could take the job after \d+ attempts: The inference server did not answer within the call's deadline of 1001 ms; then \S/,
    )
    expect((await inferenceStats()).removeCalls, 'a retry reached the server and lost it').toBeGreaterThanOrEqual(1)
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
  })

  it("an export's call deadline counts the pixels its recipe renders, not only its photo's", async () => {
    const { key } = await seedWorkspace({ credits: 3 })
    const project = await createProject(key, await succeededRemoval(key, 'astronaut.png'))
    setBindings({ INFERENCE_DEADLINE_BASE_MS: '1000', INFERENCE_DEADLINE_PER_MP_MS: '1' })
    await setInferenceMode('freeze-on-export')
    // 7000 px wide from the 512×512 photo: a 7000×7000 canvas, 49 MP, beside the 0.26 MP photo and mask.
    const res = await api(`/v1/projects/${project.id}/exports`, {
      method: 'POST',
      key,
      json: { format: 'png', recipe: { version: 1, width: 7000 } },
      headers: { prefer: 'wait=0' },
    })
    expect(res.status).toBe(202)
    const created = (await res.json()) as { id: string }
    await waitFor(async () => (await inferenceStats()).frozenRequests >= 1, 'the render to reach the server')
    setBindings({ INFERENCE_READY_TIMEOUT_MS: '500' })
    await jobEnded(created.id)
    const exported = await api(`/v1/projects/${project.id}/exports/${created.id}`, { key })
    expect(exported.status).toBe(200)
    // 1 s + 1 ms × 49.5 MP. Counting only the pixels the call reads gave the photo's 1001 ms.
    expect(await exported.json()).toMatchObject({
      status: 'failed',
      error: {
        code: 'processor_unavailable',
        message:
          "The inference server did not answer within the call's deadline of 1050 ms; no inference server was ready after that",
      },
    })
  })
})
