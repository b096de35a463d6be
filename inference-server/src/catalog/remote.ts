/**
 * The remote generative backend (`CATALOG_BACKEND=remote`): a client of a GPU diffusion server
 * speaking the catalog backend protocol of docs/catalog.md. One multipart POST carries a
 * `request` JSON part (prompt, steps, seed, size, background, shadow, layout, the count of
 * references) and the references as PNGs (decoded and upright here, so the GPU server needs no
 * HEIC or EXIF handling; long side at most 2048 px). The answer is the PNG, exactly
 * width×height. Its failures map to the inference server's error codes (`mapRemoteStatus`).
 */
import sharp from 'sharp'
import type { CatalogOptions } from '../../../src/contract/catalog.js'
import { type InferenceErrorCode, InferenceError } from '../errors.js'
import { sniffImageType } from '../imaging/sniff.js'
import type { RgbImage } from '../imaging/types.js'
import type { CatalogGenerator, CatalogReference, CatalogResult, GenerateContext } from './generator.js'
import { decodeReference } from './references.js'

export const REMOTE_PROTOCOL_VERSION = 1
/** References are sent at most this long a side: diffusion models work far below it. */
export const REMOTE_MAX_SIDE = 2048
/** An answer larger than this is not a PNG of at most 4096² we asked for. */
const MAX_ANSWER_BYTES = 128 * 1024 * 1024
/** How much of an error answer's text goes into our message. */
const MAX_DETAIL = 500

export interface RemoteGeneratorOptions {
  /** The backend's endpoint, e.g. `http://gpu-1:8000/v1/catalog/generate`. */
  url: string
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string
  timeoutMs: number
  /** Names the backend's model in `X-Model-Version` (`remote:<model>`). */
  model: string
}

/** The JSON `request` part. */
export interface RemoteRequest {
  protocol: typeof REMOTE_PROTOCOL_VERSION
  prompt: string
  steps: number
  seed: number
  width: number
  height: number
  background: string
  shadow: CatalogOptions['shadow']
  layout: CatalogOptions['layout']
  references: number
}

/**
 * The inference error code for a backend's HTTP status: its refusals of the input keep their
 * meaning, overload (429, 503) is retryable, anything else is a failure of the work.
 */
export function mapRemoteStatus(status: number): InferenceErrorCode {
  if (status === 400 || status === 422) return 'invalid_input'
  if (status === 413) return 'image_too_large'
  if (status === 415) return 'unsupported_media'
  if (status === 429 || status === 503) return 'processor_unavailable'
  return 'processing_failed'
}

/** A reference as the backend gets it: PNG, upright sRGB, at most REMOTE_MAX_SIDE a side. */
async function referencePng(image: RgbImage): Promise<Buffer> {
  const pipeline = sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
  if (Math.max(image.width, image.height) > REMOTE_MAX_SIDE) {
    pipeline.resize(REMOTE_MAX_SIDE, REMOTE_MAX_SIDE, { fit: 'inside', kernel: 'lanczos3' })
  }
  return pipeline.png({ compressionLevel: 1 }).toBuffer()
}

/** The body, refusing one past `limit` bytes without reading it all. */
async function readCapped(res: Response, limit: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > limit) throw new Error(`the answer is over ${limit} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** A backend's error answer as ours: its JSON `message` (or text), trimmed, under the mapped code. */
async function remoteError(res: Response): Promise<InferenceError> {
  const text = new TextDecoder().decode(await readCapped(res, 64 * 1024).catch(() => new Uint8Array(0)))
  let detail = text
  try {
    const body = JSON.parse(text) as { message?: unknown }
    if (typeof body.message === 'string') detail = body.message
  } catch {
    // Not JSON: the text is the detail.
  }
  const retryAfter = res.status === 429 || res.status === 503 ? 1 : undefined
  return new InferenceError(
    mapRemoteStatus(res.status),
    `The catalog backend answered ${res.status}: ${detail.trim().slice(0, MAX_DETAIL) || res.statusText}`,
    { retryAfter },
  )
}

/** Checks that the answer is a PNG of exactly the size asked. */
async function checkAnswer(png: Uint8Array, width: number, height: number): Promise<void> {
  if (sniffImageType(png) !== 'image/png') {
    throw new InferenceError('processing_failed', 'The catalog backend answered bytes that are not a PNG')
  }
  const meta = await sharp(png).metadata()
  if (meta.width !== width || meta.height !== height) {
    throw new InferenceError(
      'processing_failed',
      `The catalog backend answered a ${meta.width}×${meta.height} image; expected ${width}×${height}`,
    )
  }
}

/**
 * @example createRemoteGenerator({ url: 'http://gpu-1:8000/v1/catalog/generate', timeoutMs: 120_000, model: 'sdxl' })
 */
export function createRemoteGenerator(config: RemoteGeneratorOptions): CatalogGenerator {
  return {
    backend: 'remote',
    version: () => `remote:${config.model}`,
    generate: (references, options, context) => generateRemote(config, references, options, context),
    close: async () => {},
  }
}

async function generateRemote(
  { url, token, timeoutMs }: RemoteGeneratorOptions,
  references: CatalogReference[],
  options: CatalogOptions,
  { onStage }: GenerateContext,
): Promise<CatalogResult> {
  const timings: Record<string, number> = {}
  let started = performance.now()
  const form = new FormData()
  const request: RemoteRequest = {
    protocol: REMOTE_PROTOCOL_VERSION,
    prompt: options.prompt,
    steps: options.steps,
    seed: options.seed,
    width: options.width,
    height: options.height,
    background: options.background,
    shadow: options.shadow,
    layout: options.layout,
    references: references.length,
  }
  form.append('request', new Blob([JSON.stringify(request)], { type: 'application/json' }))
  for (const reference of references) {
    const png = await referencePng(await decodeReference(reference))
    form.append(reference.name, new Blob([png], { type: 'image/png' }), `${reference.name}.png`)
  }
  timings.prepare = performance.now() - started

  onStage('rendering')
  started = performance.now()
  let res: Response
  try {
    res = await fetch(url, {
      method: 'POST',
      body: form,
      headers: { accept: 'image/png', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError'
    const why = timedOut ? `did not answer within ${timeoutMs} ms` : `could not be reached (${(err as Error).message})`
    throw new InferenceError('processor_unavailable', `The catalog backend ${why}`, { cause: err, retryAfter: 1 })
  }
  if (res.status !== 200) throw await remoteError(res)
  let png: Uint8Array
  try {
    png = await readCapped(res, MAX_ANSWER_BYTES)
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError'
    const why = timedOut
      ? `did not finish its answer within ${timeoutMs} ms`
      : `broke off its answer (${(err as Error).message})`
    throw new InferenceError(timedOut ? 'processor_unavailable' : 'processing_failed', `The catalog backend ${why}`, {
      cause: err,
    })
  }
  await checkAnswer(png, options.width, options.height)
  timings.generate = performance.now() - started
  for (const step of Object.keys(timings)) timings[step] = Math.round(timings[step] * 10) / 10
  return { png, width: options.width, height: options.height, warnings: [], timings }
}
