/**
 * The remote try-on backend (`TRYON_BACKEND=remote`): a client of a GPU try-on server (a
 * diffusion model, typically) speaking the protocol of docs/try-on.md. One multipart POST carries
 * a `request` JSON part (protocol, category, seed, the result's width and height) and the two
 * photos as PNGs (decoded and upright here, at most 2048 px a side). The answer is multipart:
 * `result` (a PNG of exactly width×height), optionally `landmarks` (JSON) and `warnings` (JSON).
 * Its failures map to the inference server's error codes as the catalog backend's do.
 */
import sharp from 'sharp'
import type { Notice } from '../../../src/contract/frames.js'
import type { TryOnCategory, TryOnLandmarks, TryOnRequest } from '../../../src/contract/tryon.js'
import { TRYON_WARNINGS } from '../../../src/contract/tryon.js'
import { decodeReference } from '../catalog/references.js'
import { mapRemoteStatus } from '../catalog/remote.js'
import { InferenceError } from '../errors.js'
import { sniffImageType } from '../imaging/sniff.js'
import type { RgbImage } from '../imaging/types.js'
import { EXPERIMENTAL_NOTICE, type TryOnContext, type TryOnInput, type TryOnModel, type TryOnResult } from './model.js'

export const TRYON_PROTOCOL_VERSION = 1
/** Photos are sent at most this long a side: try-on models work far below it. */
export const REMOTE_MAX_SIDE = 2048
/** An answer larger than this is not the PNG we asked for. */
const MAX_ANSWER_BYTES = 128 * 1024 * 1024
const MAX_DETAIL = 500

export interface RemoteTryOnOptions {
  /** The backend's endpoint, e.g. `http://gpu-1:8000/v1/try-on`. */
  url: string
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string
  timeoutMs: number
  /** Names the backend's model in `X-Model-Version` (`remote:<model>`). */
  model: string
}

/** The JSON `request` part. */
export interface RemoteTryOnRequest {
  protocol: typeof TRYON_PROTOCOL_VERSION
  category: TryOnCategory
  seed: number
  /** The result's size: the person photo's, after EXIF orientation. */
  width: number
  height: number
}

async function toPng(image: RgbImage): Promise<Buffer> {
  const pipeline = sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
  if (Math.max(image.width, image.height) > REMOTE_MAX_SIDE) {
    pipeline.resize(REMOTE_MAX_SIDE, REMOTE_MAX_SIDE, { fit: 'inside', kernel: 'lanczos3' })
  }
  return pipeline.png({ compressionLevel: 1 }).toBuffer()
}

/**
 * A backend's refusal as ours. A 422 whose JSON `code` is `pose_not_detected` is the person
 * image's fault, like the CPU model's; the rest keep the catalog backend's mapping.
 */
async function remoteError(res: Response): Promise<InferenceError> {
  const text = (await res.text().catch(() => '')).slice(0, 64 * 1024)
  let detail = text
  let code: unknown
  try {
    const body = JSON.parse(text) as { message?: unknown; code?: unknown }
    if (typeof body.message === 'string') detail = body.message
    code = body.code
  } catch {
    // Not JSON: the text is the detail.
  }
  detail = detail.trim().slice(0, MAX_DETAIL) || res.statusText
  if (code === TRYON_WARNINGS.noPose) {
    return new InferenceError('invalid_input', `person: no person was found in the person image (${detail})`)
  }
  const retryAfter = res.status === 429 || res.status === 503 ? 1 : undefined
  return new InferenceError(mapRemoteStatus(res.status), `The try-on backend answered ${res.status}: ${detail}`, {
    retryAfter,
  })
}

async function post(config: RemoteTryOnOptions, form: FormData): Promise<Response> {
  try {
    return await fetch(config.url, {
      method: 'POST',
      body: form,
      headers: { accept: 'multipart/form-data', ...(config.token ? { authorization: `Bearer ${config.token}` } : {}) },
      signal: AbortSignal.timeout(config.timeoutMs),
    })
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError'
    const why = timedOut
      ? `did not answer within ${config.timeoutMs} ms`
      : `could not be reached (${(err as Error).message})`
    throw new InferenceError('processor_unavailable', `The try-on backend ${why}`, { cause: err, retryAfter: 1 })
  }
}

/** Reads the multipart answer and checks it: a PNG of exactly width×height, JSON where JSON belongs. */
async function readAnswer(res: Response, width: number, height: number) {
  const length = Number(res.headers.get('content-length') ?? 0)
  if (length > MAX_ANSWER_BYTES)
    throw new InferenceError('processing_failed', `The try-on backend's answer is over ${MAX_ANSWER_BYTES} bytes`)
  let form: FormData
  try {
    form = await res.formData()
  } catch (err) {
    throw new InferenceError(
      'processing_failed',
      `The try-on backend's answer is not multipart: ${(err as Error).message}`,
      { cause: err },
    )
  }
  const result = form.get('result')
  if (!(result instanceof Blob))
    throw new InferenceError('processing_failed', 'The try-on backend answered no result part')
  const png = new Uint8Array(await result.arrayBuffer())
  if (sniffImageType(png) !== 'image/png') {
    throw new InferenceError('processing_failed', 'The try-on backend answered a result that is not a PNG')
  }
  const meta = await sharp(png).metadata()
  if (meta.width !== width || meta.height !== height) {
    throw new InferenceError(
      'processing_failed',
      `The try-on backend answered a ${meta.width}×${meta.height} image; expected ${width}×${height}`,
    )
  }
  const json = async <T>(name: string): Promise<T | undefined> => {
    const part = form.get(name)
    if (part === null) return undefined
    try {
      return JSON.parse(typeof part === 'string' ? part : await part.text()) as T
    } catch {
      throw new InferenceError('processing_failed', `The try-on backend's ${name} part is not JSON`)
    }
  }
  return { png, landmarks: await json<TryOnLandmarks>('landmarks'), warnings: await json<Notice[]>('warnings') }
}

/**
 * @example createRemoteTryOn({ url: 'http://gpu-1:8000/v1/try-on', timeoutMs: 120_000, model: 'idm-vton' })
 */
export function createRemoteTryOn(config: RemoteTryOnOptions): TryOnModel {
  return {
    backend: 'remote',
    version: () => `remote:${config.model}`,
    ready: async () => {},
    tryOn: (input, options, context) => tryOnRemote(config, input, options, context),
    close: async () => {},
  }
}

async function tryOnRemote(
  config: RemoteTryOnOptions,
  input: TryOnInput,
  options: TryOnRequest,
  { onStage }: TryOnContext,
): Promise<TryOnResult> {
  let started = performance.now()
  const person = await decodeReference({ name: 'person', bytes: input.person })
  const garment = await decodeReference({ name: 'garment', bytes: input.garment })
  const { width, height } = person
  const request: RemoteTryOnRequest = {
    protocol: TRYON_PROTOCOL_VERSION,
    category: options.category,
    seed: options.seed,
    width,
    height,
  }
  const form = new FormData()
  form.append('request', new Blob([JSON.stringify(request)], { type: 'application/json' }))
  form.append('person', new Blob([await toPng(person)], { type: 'image/png' }), 'person.png')
  form.append('garment', new Blob([await toPng(garment)], { type: 'image/png' }), 'garment.png')
  const timings: Record<string, number> = { prepare: performance.now() - started }

  onStage('rendering')
  started = performance.now()
  const res = await post(config, form)
  if (res.status !== 200) throw await remoteError(res)
  const answer = await readAnswer(res, width, height)
  timings.generate = performance.now() - started
  for (const step of Object.keys(timings)) timings[step] = Math.round(timings[step] * 10) / 10
  const extra = (answer.warnings ?? []).filter(
    (w): w is Notice =>
      typeof w?.code === 'string' && typeof w.message === 'string' && w.code !== TRYON_WARNINGS.experimental,
  )
  return {
    png: answer.png,
    width,
    height,
    landmarks: answer.landmarks ?? { width, height, points: {}, region: [0, 0, width, height] },
    warnings: [EXPERIMENTAL_NOTICE, ...extra],
    timings,
  }
}
