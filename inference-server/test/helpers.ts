import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import {
  type DoneFrame,
  type ErrorFrame,
  FRAMES_CONTENT_TYPE,
  type Frame,
  type OutputFrame,
  readFrames,
} from '../../src/contract/frames.js'
import type { RemoveRequest } from '../../src/contract/options.js'
import type { InferenceStage } from '../../src/contract/stages.js'
import { imagePart, optionsPart, type RequestPart, signedRequest } from '../src/auth.js'
import type { Mask } from '../src/imaging/types.js'
import type { ModelInput } from '../src/segmentation/model.js'

/** What stub segmenters say about their input: a fixed 1024² model, like a static SEGMENTATION_MODEL. */
export const STUB_INPUT: ModelInput = { kind: 'static', native: { width: 1024, height: 1024 } }

export const fixture = (name: string): Promise<Buffer> =>
  readFile(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)))

/**
 * Decodes a PNG: `channels` is what the file stores (from its header); `data` holds that many
 * channels (sharp would expand a greyscale PNG to RGB on raw output, so 1-channel ones are extracted).
 */
export async function rawPng(
  png: Uint8Array,
): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { channels = 0, width = 0, height = 0, format } = await sharp(png).metadata()
  if (format !== 'png') throw new Error(`expected a PNG, got ${format}`)
  const pipeline = channels === 1 ? sharp(png).extractChannel(0) : sharp(png)
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true })
  if (info.channels !== channels) throw new Error(`decoded ${info.channels} channels from a ${channels}-channel PNG`)
  return { data, width, height, channels }
}

/** Mean absolute difference of two 8-bit planes, in 8-bit units. */
export function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`)
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i])
  return sum / a.length
}

/** A mask whose left half is 0 and right half 255 (a vertical edge between columns w/2-1 and w/2). */
export function stepMask(width: number, height: number): Mask {
  const data = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) data.fill(255, y * width + width / 2, (y + 1) * width)
  return { data, width, height }
}

/** Where a job request goes: a listening server's base URL, or an app answered in-process. */
export type Target = string | { request(path: string, init: RequestInit): Response | Promise<Response> }

/** A job answer, read whole: the frames in order, with their arrival times. */
export interface JobAnswer {
  status: number
  headers: Headers
  /** The JSON body of an answer that is not frames (errors before the work began, `/v1/inspect`). */
  json?: unknown
  /** Every frame in order (an output without its bytes). */
  frames: Frame[]
  /** Milliseconds from the request to each frame's header, by index in `frames`. */
  arrivals: number[]
  stages: InferenceStage[]
  outputs: Array<OutputFrame & { bytes: Uint8Array }>
  done?: DoneFrame
  error?: ErrorFrame
}

/** Sends a request and returns its answer without reading the body. */
export function send(target: Target, path: string, init: RequestInit): Promise<Response> {
  return Promise.resolve(typeof target === 'string' ? fetch(target + path, init) : target.request(path, init))
}

/**
 * POSTs `parts` to `path`, signed with `key`. `body` replaces the signed body with another (made
 * from it) after signing, for the refusal tests.
 */
export async function postParts(
  target: Target,
  key: string,
  path: string,
  parts: RequestPart[],
  { body: replaceBody }: { body?: (signed: Uint8Array) => Uint8Array } = {},
): Promise<Response> {
  const { headers, body } = await signedRequest(key, 'POST', path, parts)
  const sent = replaceBody ? replaceBody(body) : body
  return send(target, path, { method: 'POST', headers, body: new Uint8Array(sent) })
}

/**
 * Reads a job answer with `readFrames`: stages, outputs (as bytes), `done` or `error`. An answer
 * that is not frames is read as JSON. `started` is when the request was sent.
 */
export async function collectFrames(res: Response, started = performance.now()): Promise<JobAnswer> {
  const answer: JobAnswer = {
    status: res.status,
    headers: res.headers,
    frames: [],
    arrivals: [],
    stages: [],
    outputs: [],
  }
  if (res.headers.get('content-type') !== FRAMES_CONTENT_TYPE || !res.body) {
    answer.json = await res.json()
    return answer
  }
  for await (const frame of readFrames(res.body)) {
    // `done` and `error` end an answer: anything after one breaks the protocol.
    if (answer.done || answer.error) throw new Error(`a ${frame.type} frame after the answer ended`)
    answer.arrivals.push(performance.now() - started)
    if (frame.type === 'output') {
      const { body, ...header } = frame
      answer.frames.push(header)
      answer.outputs.push({ ...header, bytes: new Uint8Array(await new Response(body).arrayBuffer()) })
      continue
    }
    answer.frames.push(frame)
    if (frame.type === 'stage') answer.stages.push(frame.stage)
    else if (frame.type === 'done') answer.done = frame
    else answer.error = frame
  }
  return answer
}

/** Posts a signed job request and reads its whole answer. */
export async function postJob(target: Target, key: string, path: string, parts: RequestPart[]): Promise<JobAnswer> {
  const started = performance.now()
  return collectFrames(await postParts(target, key, path, parts), started)
}

/** Balanced, raw alpha, a mask: the options most tests send. */
export const MASK_OPTIONS: RemoveRequest = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'mask' }

/** The parts of a `/v1/remove` request: `options` (any JSON, to test refusals) and `image`. */
export const removeParts = (image: Uint8Array, options: unknown = MASK_OPTIONS): RequestPart[] => [
  optionsPart(options),
  imagePart(image),
]

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Polls `probe` until it returns something truthy. For states a test waits on: how long they take
 * depends on the machine, so the deadline is generous and only reached when something is stuck.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(20)
  }
}
