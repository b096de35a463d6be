/**
 * The SDK against the real local stack (`npm start`, the real model; one for the stage, test/helpers/e2e-stack.ts): a fixture's background
 * removed in one call, a Blob with a media type the API does not list uploaded, and a bad option
 * as a typed `CutoutProblem`.
 */
import { readFileSync } from 'node:fs'
import { Cutout, CutoutProblem, type RemovalOptions } from '@cutout/sdk'
import { readImageFile } from '@cutout/sdk/node'
import { beforeAll, describe, expect, it } from 'vitest'
import { type E2eStack, e2eStack } from '../../test/helpers/e2e-stack'

const FIXTURE = new URL('../../test/fixtures/astronaut.png', import.meta.url)

/** Width, height and colour type from a PNG's IHDR chunk. */
function pngHeader(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const signature = Buffer.from(bytes.subarray(0, 8)).toString('hex')
  return { signature, width: view.getUint32(16), height: view.getUint32(20), colourType: bytes[25] }
}

let stack: E2eStack
let cutout: Cutout

beforeAll(() => {
  stack = e2eStack()
  cutout = new Cutout({ baseUrl: stack.baseUrl, apiKey: stack.apiKey })
})

describe('@cutout/sdk against the local stack', () => {
  it('removes the background of a file in one call: a 512×512 RGBA PNG', async () => {
    const { job, bytes, contentType } = await cutout.removeBackground(await readImageFile(FIXTURE.pathname))
    expect(job.status).toBe('succeeded')
    expect(contentType).toBe('image/png')
    expect(pngHeader(bytes)).toEqual({ signature: '89504e470d0a1a0a', width: 512, height: 512, colourType: 6 })
  })

  it('takes plain bytes too (mask output)', async () => {
    const { bytes } = await cutout.removeBackground(new Uint8Array(readFileSync(FIXTURE)), { output: 'mask' })
    expect(pngHeader(bytes)).toMatchObject({ width: 512, height: 512 })
  })

  it('uploads a Blob typed as a browser may (image/jpg, not a type the API lists)', async () => {
    const upload = await cutout.upload(new Blob([readFileSync(FIXTURE)], { type: 'image/jpg' }))
    expect(upload).toMatchObject({ status: 'ready', mimeType: 'image/png', width: 512, height: 512 })
  })

  it('throws a typed CutoutProblem for a bad option', async () => {
    const upload = await cutout.upload(readFileSync(FIXTURE))
    const bad = { quality: 'ultra' } as unknown as Partial<RemovalOptions>
    const err = await cutout.createRemoval({ uploadId: upload.id }, bad).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CutoutProblem)
    const problem = err as CutoutProblem
    expect(problem).toMatchObject({ status: 400, code: 'invalid_input', retryable: false })
    expect(problem.field).toMatch(/quality/)
    expect(problem.requestId).toBeTruthy()
  })
})
