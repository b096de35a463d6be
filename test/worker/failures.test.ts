import { afterEach, describe, expect, it } from 'vitest'
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

afterEach(async () => {
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
    expect((await inferenceStats()).removeCalls).toBe(3)
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
// never answers. Readiness that does not answer within INFERENCE_READY_TIMEOUT_MS (5 s here, the
// production default) counts as down. The deadline of a call in flight is tested end to end
// against a real SIGSTOPped inference server (test/e2e/faults.test.ts), where deadlines are short.
describe('when the inference server is frozen (connections accepted, nothing answered)', () => {
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
    expect(await usage(key)).toMatchObject({ held: 0, used: 0, available: 3 })
  })
})
