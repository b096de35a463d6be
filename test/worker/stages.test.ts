import { afterEach, describe, expect, it } from 'vitest'
import {
  api,
  fixtureBytes,
  inferenceStats,
  RAW_CUTOUT,
  releaseHeldAnswers,
  removal,
  seedWorkspace,
  setInferenceMode,
  uploadImage,
} from './helpers'
import { sseReader } from './sse'

afterEach(async () => {
  await setInferenceMode('normal')
  await releaseHeldAnswers()
})

describe('honest stages', () => {
  it('streams each inference stage while the inference call is still in flight', async () => {
    const { key } = await seedWorkspace()
    const upload = await uploadImage(key, await fixtureBytes('astronaut.png'))
    // The proxy forwards the server's answer up to its first output frame and holds the rest:
    // until released, the edge's call to the inference server has not returned.
    await setInferenceMode('hold-output')
    const job = (await (await removal(key, { uploadId: upload.id, options: RAW_CUTOUT })).json()) as { id: string }
    const next = sseReader(await api(`/v1/jobs/${job.id}/events`, { key }))

    const before: string[] = []
    for (let e = await next(); e; e = await next()) {
      before.push(e.data.data.stage)
      if (e.data.data.stage === 'rendering') break
    }
    expect(before).toEqual(['queued', 'preparing', 'segmenting', 'refining', 'rendering'])
    // Every stage above arrived while the answer was held: the call is still running.
    expect(await inferenceStats()).toMatchObject({ held: 1 })
    const during = (await (await api(`/v1/jobs/${job.id}`, { key })).json()) as { status: string; stage: string }
    expect(during).toMatchObject({ status: 'processing', stage: 'rendering' })

    expect(await releaseHeldAnswers()).toBe(1)
    const after: string[] = []
    for (let e = await next(); e; e = await next()) after.push(`${e.event}:${e.data.data.stage}`)
    expect(after).toEqual(['image.job.progress.v1:storing', 'image.job.completed.v1:complete'])
  })
})
