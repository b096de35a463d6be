/**
 * @module
 * The edge's client of the inference server (docs/inference-protocol.md). Every call is signed
 * with a short-lived JWT bound to the method, the path (with its query) and the body's SHA-256,
 * so a captured token can neither be replayed nor reused for other bytes.
 */
import { SignJWT } from 'jose'
import { ApiError, type ErrorCode } from '../errors'
import type { RemovalOptions } from '../schemas/removal'

export const JWT_ISSUER = 'cutout-edge'
export const JWT_AUDIENCE = 'cutout-inference'
const TOKEN_LIFETIME_S = 30
const READY_TIMEOUT_MS = 5_000
const INSPECT_TIMEOUT_MS = 60_000
const EMPTY_SHA256 = '47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU'

export interface ImageInfo {
  width: number
  height: number
  mimeType: string
}

export type Readiness = { state: 'ready' | 'saturated' | 'unavailable'; retryAfter?: number; modelVersion?: string }

/** A failure reported by, or on the way to, the inference server. */
export class InferenceFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly retryable: boolean,
    readonly retryAfter?: number,
  ) {
    super(message)
  }
}

/** Bytes to send, with their length and base64url SHA-256 known up front (R2 keeps both). */
export interface SignedBody {
  body: ReadableStream | ArrayBuffer | Uint8Array
  length: number
  sha256: string
}

export interface InferenceClientConfig {
  urls: string[]
  signingKey: string
  fetchImpl?: typeof fetch
}

export function removalQuery(options: RemovalOptions, maxPixels?: number): string {
  const q = new URLSearchParams({ quality: options.quality, alpha: options.alpha.mode })
  if (options.alpha.mode === 'binary') q.set('threshold', String(options.alpha.threshold))
  q.set('feather', String(options.alpha.feather))
  q.set('output', options.output)
  if (maxPixels) q.set('maxPixels', String(maxPixels))
  return q.toString()
}

export class InferenceClient {
  readonly #config: InferenceClientConfig
  readonly #fetch: typeof fetch

  constructor(config: InferenceClientConfig) {
    if (!config.urls.length) throw new Error('Expected at least one inference server URL')
    this.#config = config
    this.#fetch = config.fetchImpl ?? ((input, init) => fetch(input, init))
  }

  static fromEnv(env: { INFERENCE_URL: string; INFERENCE_SIGNING_KEY: string }): InferenceClient {
    const urls = env.INFERENCE_URL.split(',')
      .map((u) => u.trim().replace(/\/$/, ''))
      .filter(Boolean)
    return new InferenceClient({ urls, signingKey: env.INFERENCE_SIGNING_KEY })
  }

  /**
   * Whether any server can take work now, is busy, or cannot be reached at all. A server that
   * accepts the connection but is slow to answer is busy (its event loop is running a model), not
   * gone: only a refused connection or a non-answer that is not a timeout counts as unavailable.
   */
  async ready(): Promise<Readiness> {
    let best: Readiness = { state: 'unavailable', retryAfter: 5 }
    for (const url of this.#config.urls) {
      try {
        const res = await this.#fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(READY_TIMEOUT_MS) })
        const body = (await res.json().catch(() => ({}))) as { status?: string; modelVersion?: string }
        if (res.ok && body.status !== 'saturated') return { state: 'ready', modelVersion: body.modelVersion }
        if (body.status === 'saturated') best = { state: 'saturated', retryAfter: retryAfterOf(res) ?? 1 }
      } catch (err) {
        if (isTimeout(err)) best = { state: 'saturated', retryAfter: 1 }
      }
    }
    return best
  }

  async inspect(input: SignedBody): Promise<ImageInfo> {
    const res = await this.#call('POST', '/v1/inspect', input, AbortSignal.timeout(INSPECT_TIMEOUT_MS))
    return (await res.json()) as ImageInfo
  }

  /** Runs a removal; the response body is the PNG (with Content-Length). */
  async remove(
    input: SignedBody,
    options: RemovalOptions,
    signal?: AbortSignal,
    maxPixels?: number,
  ): Promise<Response> {
    return this.#call('POST', `/v1/remove?${removalQuery(options, maxPixels)}`, input, signal)
  }

  async #call(method: string, path: string, input: SignedBody | null, signal?: AbortSignal): Promise<Response> {
    const token = await signInferenceToken(this.#config.signingKey, method, path, input?.sha256 ?? EMPTY_SHA256)
    const url = this.#pickUrl()
    let res: Response
    try {
      res = await this.#fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/octet-stream',
          ...(input ? { 'content-length': String(input.length) } : {}),
        },
        body: input?.body ?? null,
        signal,
      })
    } catch (err) {
      if (signal?.aborted) throw err
      throw new InferenceFailure('processor_unavailable', `Inference server unreachable: ${String(err)}`, 503, true)
    }
    if (res.ok) return res
    const body = (await res.json().catch(() => null)) as { code?: string; message?: string; retryable?: boolean } | null
    const code = body?.code ?? (res.status >= 500 ? 'processor_unavailable' : 'processing_failed')
    const retryable = body?.retryable ?? (res.status === 503 || res.status === 502 || res.status === 504)
    throw new InferenceFailure(
      code,
      body?.message ?? `Inference server answered ${res.status}`,
      res.status,
      retryable,
      retryAfterOf(res),
    )
  }

  #pickUrl(): string {
    const { urls } = this.#config
    return urls[Math.floor(Math.random() * urls.length)]
  }
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
}

function retryAfterOf(res: Response): number | undefined {
  const v = Number(res.headers.get('retry-after'))
  return Number.isFinite(v) && v > 0 ? v : undefined
}

export async function signInferenceToken(key: string, method: string, path: string, bodySha256: string) {
  return new SignJWT({ mth: method.toUpperCase(), pth: path, bsh: bodySha256 })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${TOKEN_LIFETIME_S}s`)
    .setJti(crypto.randomUUID())
    .sign(new TextEncoder().encode(key))
}

const CLIENT_CODES = new Set(['invalid_input', 'unsupported_media', 'image_too_large'])

/** Maps an inference failure seen while a client waits on the request to its SPEC.md §7 problem. */
export function inferenceProblem(err: InferenceFailure, field?: string): ApiError {
  if (CLIENT_CODES.has(err.code)) return new ApiError(err.code as ErrorCode, err.message, { field })
  if (err.retryable) {
    return new ApiError('processor_unavailable', 'No inference server can take the request now', {
      retryAfter: err.retryAfter ?? 5,
      cause: err,
    })
  }
  return new ApiError('processing_failed', err.message, { cause: err })
}

/** 503 at accept time: nothing can run the job, so it is refused rather than left to fail. */
export async function assertProcessorAvailable(client: InferenceClient): Promise<void> {
  const readiness = await client.ready()
  if (readiness.state === 'unavailable') {
    throw new ApiError('processor_unavailable', 'No inference server is reachable', {
      retryAfter: readiness.retryAfter ?? 5,
    })
  }
}
