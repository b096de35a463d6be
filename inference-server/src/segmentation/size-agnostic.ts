/**
 * @module
 * Prepares, verifies and caches the size-agnostic graph (graph.ts) of a static ONNX model: one
 * probe run at the export's size measures each fixed Resize's input, the rewritten graph is built,
 * and then both graphs run on the fixture photos at the export's size: the file is cached only when
 * every output is identical, float for float, or when the same rewrite of the same source was found
 * identical on this runtime before (verified-graphs.ts). Runs once (`npm run prepare-model`, or
 * the first start); later starts find the cached file.
 */
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as ort from 'onnxruntime-node'
import { decodeImage } from '../imaging/decode.js'
import type { RgbImage } from '../imaging/types.js'
import { decodeModel, fixedResizes, probeModel, sizeAgnosticModel, staticInputShape } from './graph.js'
import { toInputTensor } from './preprocess.js'
import { sessionMemoryOptions } from './session-memory.js'
import { runtimeKey, sha256, VERIFIED_GRAPHS, type VerifiedGraph, wasVerified } from './verified-graphs.js'

/** The photos the rewrite is checked on (the test fixtures, public domain and CC0). */
export const VERIFY_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../test/fixtures')
export const VERIFY_PHOTOS = ['astronaut.png', 'rocket.jpg', 'chelsea.png', 'coffee.png']

/** Prepare-time sessions: one at a time, each released before the next opens. */
const PREPARE_OPTIONS: ort.InferenceSession.SessionOptions = {
  intraOpNumThreads: 2,
  ...sessionMemoryOptions(),
  graphOptimizationLevel: 'all',
}

/** The cached file's name beside the source: `x.onnx` → `x-any-size.onnx`. */
export const sizeAgnosticPath = (source: string, cacheDir = dirname(source)): string =>
  join(cacheDir, `${basename(source, '.onnx')}-any-size.onnx`)

async function verifyImages(dir: string): Promise<RgbImage[]> {
  const names = existsSync(dir) ? (await readdir(dir)).filter((n) => VERIFY_PHOTOS.includes(n)) : []
  if (!names.length) throw new Error(`No fixture photos in ${dir} to verify the size-agnostic graph on`)
  const out: RgbImage[] = []
  for (const name of names) out.push((await decodeImage(await readFile(join(dir, name)))).image)
  return out
}

/** Runs `model` on each image at `shape` and returns the main output of each. */
async function runAll(model: string | Uint8Array, images: RgbImage[], shape: number[]): Promise<Float32Array[]> {
  const session =
    typeof model === 'string'
      ? await ort.InferenceSession.create(model, PREPARE_OPTIONS)
      : await ort.InferenceSession.create(model, PREPARE_OPTIONS)
  try {
    const [, , height, width] = shape
    const outputName = session.outputNames.includes('output') ? 'output' : session.outputNames[0]
    const outputs: Float32Array[] = []
    for (const image of images) {
      const input = new ort.Tensor('float32', toInputTensor(image, { width, height }), shape)
      const result = await session.run({ [session.inputNames[0]]: input }, [outputName])
      outputs.push(new Float32Array(result[outputName].data as Float32Array))
    }
    return outputs
  } finally {
    await session.release()
  }
}

/** Each fixed Resize's input shape at the export's size, from one run of the probe graph. */
async function probeShapes(probe: { bytes: Uint8Array; outputs: string[] }, shape: number[]): Promise<number[][]> {
  const session = await ort.InferenceSession.create(probe.bytes, PREPARE_OPTIONS)
  try {
    const input = new ort.Tensor('float32', new Float32Array(shape.reduce((a, b) => a * b)), shape)
    const result = await session.run({ [session.inputNames[0]]: input }, probe.outputs)
    return probe.outputs.map((name) => Array.from(result[name].data as BigInt64Array, Number))
  } finally {
    await session.release()
  }
}

/** The index of the first output that differs anywhere, or -1. */
function firstDifference(a: Float32Array[], b: Float32Array[]): number {
  return a.findIndex((x, i) => x.length !== b[i].length || x.some((v, j) => !Object.is(v, b[i][j])))
}

/**
 * Runs the original model file and the rewritten graph on each image at `shape` (the export's
 * size) and requires every output to be identical, float for float.
 * @throws {Error} naming the first image whose outputs differ
 */
export async function verifyIdentical(
  source: string,
  rewritten: Uint8Array,
  images: RgbImage[],
  shape: number[],
): Promise<void> {
  const expected = await runAll(source, images, shape)
  const actual = await runAll(rewritten, images, shape)
  const bad = firstDifference(expected, actual)
  if (bad >= 0) throw new Error(`The size-agnostic graph of ${source} differs from the original on fixture ${bad}`)
}

export interface Rewrite {
  rewritten: Uint8Array
  /** The export's input shape, which the rewrite must be verified at. */
  shape: number[]
  /** Each fixed Resize's input shape at that size, in graph order: what the rewrite's scales come from. */
  resizeInputs: number[][]
}

/**
 * The size-agnostic graph of the static model at `source`, not yet verified (verifyIdentical).
 * `resizeInputs`, when given (a record of this source's, verified-graphs.ts), stands in for the
 * probe: one run of the whole graph at 1024², ~6 CPU-s of a fresh clone's preparation.
 * @throws {Error} when the model has no static input or no fixed Resize
 */
export async function rewriteSizeAgnostic(source: string, resizeInputs?: number[][]): Promise<Rewrite> {
  const model = decodeModel(await readFile(source))
  const shape = staticInputShape(model)
  if (!shape) throw new Error(`${source} already has a symbolic input: nothing to rewrite`)
  const resizes = fixedResizes(model)
  if (!resizes.length) throw new Error(`${source} has no Resize with a fixed target size to rewrite`)
  const inputs = resizeInputs ?? (await probeShapes(probeModel(model, resizes), shape))
  return { rewritten: sizeAgnosticModel(model, resizes, inputs), shape, resizeInputs: inputs }
}

/** What a preparation did: `cached` found the file; `checked` ran the check; `recorded` found its record. */
export interface Preparation {
  path: string
  check: 'cached' | 'checked' | 'recorded'
  /** The rewrite, when this preparation made one (the record to keep when `check` is `checked`). */
  graph?: VerifiedGraph
}

/**
 * Builds, checks and caches the size-agnostic copy of the static model at `source` when it is not
 * cached yet, and says which it did.
 * @throws {Error} when the model has no static input or no fixed Resize, or the rewrite's output
 * differs from the original's at the export's size
 */
export async function prepareSizeAgnostic(
  source: string,
  {
    cacheDir = dirname(source),
    verifyDir = VERIFY_DIR,
    verified = VERIFIED_GRAPHS,
    // A test hands in a rewrite it already made: each one parses and writes ~170 MB of graph.
    rewrite = rewriteSizeAgnostic,
  } = {},
): Promise<Preparation> {
  const path = sizeAgnosticPath(source, cacheDir)
  // Only a verified file is ever renamed into place, so its presence is the verification.
  if (existsSync(path)) return { path, check: 'cached' }
  const key = { source: sha256(await readFile(source)), runtime: runtimeKey() }
  // A record's Resize inputs spare the probe; they count only if the rewrite then has the record's
  // bytes, else the probe decides and the check runs as for any new rewrite.
  const known = verified.find((v) => v.source === key.source && v.runtime === key.runtime)?.resizeInputs
  let made = await rewrite(source, known)
  if (known && !wasVerified({ ...key, rewritten: sha256(made.rewritten) }, verified)) made = await rewrite(source)
  const { rewritten, shape, resizeInputs } = made
  const graph = { ...key, rewritten: sha256(rewritten), resizeInputs }
  const recorded = wasVerified(graph, verified)
  if (!recorded) await verifyIdentical(source, rewritten, await verifyImages(verifyDir), shape)

  await mkdir(cacheDir, { recursive: true })
  const partial = `${path}.${process.pid}.partial`
  await writeFile(partial, rewritten)
  await rename(partial, path)
  return { path, check: recorded ? 'recorded' : 'checked', graph }
}

/**
 * Returns the path of the verified size-agnostic copy of the static model at `source`, building
 * and caching it first when needed (prepareSizeAgnostic).
 * @example await prepareSizeAgnosticModel(await prepareDefaultModel()) // '.models/isnet-…-any-size.onnx'
 */
export async function prepareSizeAgnosticModel(source: string, options?: { cacheDir?: string }): Promise<string> {
  return (await prepareSizeAgnostic(source, options)).path
}
