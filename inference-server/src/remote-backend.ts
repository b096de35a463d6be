/**
 * What the clients of remote GPU backends (catalog/remote.ts, try-on/remote.ts) have in common:
 * photos sent as PNGs, one POST with a timeout, the backend's refusals mapped to our error codes,
 * and the answer's PNG checked before anyone stores it. The protocols themselves (the request
 * JSON, how the answer is packed) stay with each client. Messages name the backend (`The catalog
 * backend …`) because an operator running both must see which one failed.
 */
import sharp from 'sharp'
import { type InferenceErrorCode, InferenceError } from './errors.js'
import { sniffImageType } from './imaging/sniff.js'
import type { RgbImage } from './imaging/types.js'
import type { RemoteSettings } from './remote-config.js'

/** The backend as messages name it. */
export type RemoteBackendName = 'catalog' | 'try-on'

/** Photos are sent at most this long a side: the backends' models work far below it. */
export const REMOTE_MAX_SIDE = 2048
/** An answer larger than this is not a PNG of at most 4096² we asked for. */
export const MAX_ANSWER_BYTES = 128 * 1024 * 1024
/** How much of an error answer is read: its head holds all of the message we keep. */
const MAX_ERROR_BYTES = 64 * 1024
/** How much of an error answer's text goes into our message. */
const MAX_DETAIL = 500

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

/**
 * A photo as a backend gets it: PNG, upright sRGB (decoded here, so the GPU server needs no HEIC
 * or EXIF handling), at most REMOTE_MAX_SIDE a side. Level 1: the bytes only cross a network.
 */
export async function remotePng(image: RgbImage): Promise<Buffer> {
  const pipeline = sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
  if (Math.max(image.width, image.height) > REMOTE_MAX_SIDE) {
    pipeline.resize(REMOTE_MAX_SIDE, REMOTE_MAX_SIDE, { fit: 'inside', kernel: 'lanczos3' })
  }
  return pipeline.png({ compressionLevel: 1 }).toBuffer()
}

/**
 * The body, at most `limit` bytes, without reading past them. An answer over the limit throws
 * (it is not what we asked for); with `cut`, reading just stops there (an error's head is enough).
 */
export async function readCapped(res: Response, limit: number, over: 'throw' | 'cut' = 'throw'): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (size + chunk.byteLength > limit) {
      if (over === 'throw') throw new Error(`the answer is over ${limit} bytes`)
      chunks.push(chunk.subarray(0, limit - size))
      break
    }
    size += chunk.byteLength
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * POSTs `form` to the backend, its token as a bearer token. The timeout covers the answer's body
 * too: a backend that stalls mid-answer is as unavailable as one that never answers.
 * @throws {InferenceError} `processor_unavailable` (retry after 1 s) when it does not answer in time or cannot be reached
 */
export async function postRemote(
  backend: RemoteBackendName,
  { url, token, timeoutMs }: RemoteSettings,
  form: FormData,
  accept: string,
): Promise<Response> {
  try {
    return await fetch(url, {
      method: 'POST',
      body: form,
      headers: { accept, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError'
    const why = timedOut ? `did not answer within ${timeoutMs} ms` : `could not be reached (${(err as Error).message})`
    throw new InferenceError('processor_unavailable', `The ${backend} backend ${why}`, { cause: err, retryAfter: 1 })
  }
}

/** A backend's error answer, as our message quotes it. */
export interface RemoteRefusal {
  /** Its JSON `message` (or its text), trimmed and cut to MAX_DETAIL; the status text when empty. */
  detail: string
  /** Its JSON `code`, for a protocol that gives one a meaning of its own. */
  code?: unknown
}

/** Reads an error answer; only its head, so a backend's huge error page costs no memory. */
export async function readRefusal(res: Response): Promise<RemoteRefusal> {
  const head = await readCapped(res, MAX_ERROR_BYTES, 'cut').catch(() => new Uint8Array(0))
  const text = new TextDecoder().decode(head)
  let detail = text
  let code: unknown
  try {
    const body = JSON.parse(text) as { message?: unknown; code?: unknown }
    if (typeof body.message === 'string') detail = body.message
    code = body.code
  } catch {
    // Not JSON: the text is the detail.
  }
  return { detail: detail.trim().slice(0, MAX_DETAIL) || res.statusText, code }
}

/** A refusal as ours, under the mapped code; overload says when to retry. */
export function refusalError(backend: RemoteBackendName, status: number, { detail }: RemoteRefusal): InferenceError {
  const retryAfter = status === 429 || status === 503 ? 1 : undefined
  return new InferenceError(mapRemoteStatus(status), `The ${backend} backend answered ${status}: ${detail}`, {
    retryAfter,
  })
}

/**
 * Checks that the answer is a PNG of exactly the size asked: a backend that scaled or cropped
 * would otherwise hand on a result of another size than the request's.
 * `what` names the bytes in the message: `bytes that are` (a whole body), `a result that is` (a part).
 * @throws {InferenceError} `processing_failed`
 */
export async function checkRemotePng(
  backend: RemoteBackendName,
  png: Uint8Array,
  width: number,
  height: number,
  what: string,
): Promise<void> {
  if (sniffImageType(png) !== 'image/png') {
    throw new InferenceError('processing_failed', `The ${backend} backend answered ${what} not a PNG`)
  }
  const meta = await sharp(png).metadata()
  if (meta.width !== width || meta.height !== height) {
    throw new InferenceError(
      'processing_failed',
      `The ${backend} backend answered a ${meta.width}×${meta.height} image; expected ${width}×${height}`,
    )
  }
}
