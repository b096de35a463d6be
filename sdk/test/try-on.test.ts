/**
 * The SDK's try-on helper against the real local stack (test/helpers/e2e-stack.ts): a person photo
 * and a garment uploaded, the try-on made, waited for and downloaded in one call, its warnings on
 * the job; a photo with no person in it thrown as the job's problem.
 */
import { Cutout, JobFailedError } from '@cutout/sdk'
import { readImageFile } from '@cutout/sdk/node'
import sharp from 'sharp'
import { beforeAll, describe, expect, it } from 'vitest'
import { TRYON_WARNINGS } from '../../src/contract/tryon-warnings'
import { e2eStack } from '../../test/helpers/e2e-stack'

const file = (path: string) => readImageFile(new URL(`../../${path}`, import.meta.url).pathname)

let cutout: Cutout
beforeAll(() => {
  const stack = e2eStack()
  cutout = new Cutout({ baseUrl: stack.baseUrl, apiKey: stack.apiKey })
})

describe('@cutout/sdk try-on', () => {
  it('puts a dress on a person in one call: a PNG at the person photo’s size, with its warnings', async () => {
    const person = await file('inference-server/test/fixtures/people/standing-field.jpg')
    const garment = await file('docs/try-on/garment-dress.jpg')
    const { job, bytes, contentType } = await cutout.tryOn(person, garment, { category: 'dress', seed: 7 })
    expect(job).toMatchObject({ kind: 'virtual_try_on', status: 'succeeded' })
    expect(contentType).toBe('image/png')
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'png', width: 427, height: 640 })
    expect(job.warnings.map((w) => w.code)).toEqual([TRYON_WARNINGS.experimental, TRYON_WARNINGS.partialBody])
  })

  it('throws the failed job’s problem for a photo with no person in it', async () => {
    const person = await file('inference-server/test/fixtures/coffee.png')
    const garment = await file('docs/try-on/garment-dress.jpg')
    const err = await cutout.tryOn(person, garment, { category: 'dress' }).catch((e) => e)
    expect(err).toBeInstanceOf(JobFailedError)
    expect(err.job).toMatchObject({ kind: 'virtual_try_on', status: 'failed' })
  })
})
