/**
 * @module
 * The edge's client of the inference server (docs/inference-protocol.md). Every call is signed
 * with a short-lived JWT bound to the method, the path and each part of the body (the shared
 * contract's `signInferenceToken`), so a captured token can neither be replayed nor reused for
 * other bytes. With several servers in `INFERENCE_URL`, readiness picks one that can take work,
 * and the call goes to that same server.
 */
import { ApiError, type ErrorCode } from '../errors'
import { type PartManifest, signInferenceToken } from '../contract/signing'
import { childTraceparent, TRACEPARENT_HEADER } from '../contract/trace'
import { DEADLINE_DEFAULTS } from './deadlines'
import { type AnswerHandlers, type CallOutcome, receiveAnswer } from './inference-answer'
import { InferenceFailure } from './inference-failure'

const INSPECT_TIMEOUT_MS = 60_000

export interface ImageInfo {
  width: number
  height: number
  mimeType: string
}

export type Readiness = {
  state: 'ready' | 'saturated' | 'unavailable'
  retryAfter?: number
  modelVersion?: string
  /** The server that answered ready: send the work there. */
  url?: string
}

export { type FailureKind, InferenceFailure } from './inference-failure'

/**
 * One part of a request: its manifest entry and its bytes (a stored object's stream, or bytes at
 * hand); an image part also says how many pixels its header declares, when it does (the call's
 * deadline scales with them).
 */
export type RequestPart = PartManifest & { body: ReadableStream<Uint8Array> | Uint8Array; pixels?: number }

export interface InferenceClientConfig {
  urls: string[]
  signingKey: string
  fetchImpl?: typeof fetch
  /** How long a readiness check may take before the server counts as down (default 5 s). */
  readyTimeoutMs?: number
}

export class InferenceClient {
  readonly #config: InferenceClientConfig
  readonly #fetch: typeof fetch

  constructor(config: InferenceClientConfig) {
    if (!config.urls.length) throw new Error('Expected at least one inference server URL')
    this.#config = config
    // Called as a plain function: workerd refuses the global fetch called as a method of another object.
    this.#fetch = config.fetchImpl ?? ((input, init) => fetch(input, init))
  }

  /** The deployment's client; made once, where services are made (services/context.ts). */
  static fromEnv(
    env: { INFERENCE_URL: string; INFERENCE_SIGNING_KEY: string },
    readyTimeoutMs: number,
  ): InferenceClient {
    const urls = env.INFERENCE_URL.split(',')
      .map((u) => u.trim().replace(/\/$/, ''))
      .filter(Boolean)
    return new InferenceClient({ urls, signingKey: env.INFERENCE_SIGNING_KEY, readyTimeoutMs })
  }

  /**
   * Whether a server can take work now (and which), is busy, or cannot be reached at all. Servers
   * are asked in a random order, so load spreads; the first that answers ready wins. `avoid` (a
   * server whose last call ran past its deadline) is asked last, so a retry goes elsewhere when
   * anywhere else can take it.
   *
   * The model runs off the server's event loop, so readiness answers at once even while it works:
   * a check that does not answer within the bound is a frozen or wedged server, and counts as down
   * (before issue 15 it counted as busy, and a frozen server kept jobs waiting and accepted new
   * ones). A server still loading its model (a restart) is busy: it will be ready in seconds.
   */
  async ready(avoid?: string): Promise<Readiness> {
    let best: Readiness = { state: 'unavailable', retryAfter: 5 }
    const timeout = this.#config.readyTimeoutMs ?? DEADLINE_DEFAULTS.readyTimeoutMs
    const order = shuffled(this.#config.urls).sort((a, b) => Number(a === avoid) - Number(b === avoid))
    for (const url of order) {
      try {
        const res = await this.#fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(timeout) })
        const body = (await res.json().catch(() => ({}))) as { status?: string; modelVersion?: string }
        if (res.ok && body.status !== 'saturated') return { state: 'ready', modelVersion: body.modelVersion, url }
        if (body.status === 'saturated' || body.status === 'loading') {
          best = { state: 'saturated', retryAfter: retryAfterOf(res) ?? 1 }
        }
      } catch {
        // Refused, reset, or no answer within the bound: this server is down; ask the next.
      }
    }
    return best
  }

  /** Validates a whole image and returns its upright size and type; `trace`: see `call`. */
  async inspect(image: RequestPart, { trace }: CallOptions = {}): Promise<ImageInfo> {
    const readiness = await this.ready()
    if (readiness.state !== 'ready') {
      throw new InferenceFailure('processor_unavailable', 'No inference server can inspect the image now', 503, true)
    }
    const signal = AbortSignal.timeout(INSPECT_TIMEOUT_MS)
    try {
      const res = await this.call(readiness.url, '/v1/inspect', [image], signal, trace)
      return (await res.json()) as ImageInfo
    } catch (err) {
      if (signal.aborted) throw deadlinePassed(INSPECT_TIMEOUT_MS)
      throw err
    }
  }

  /**
   * POSTs `parts` to `path` on `url` (a server that answered ready; any server when none did).
   * Resolves with the answer once its status is OK: for a job route, a stream of frames. With
   * `trace`, the call is a new span of that trace (`traceparent`) and carries the request id, so
   * the inference server's log line names both (docs/operations.md).
   * @throws {InferenceFailure} for an error answer or an unreachable server
   */
  async call(
    url: string | undefined,
    path: string,
    parts: RequestPart[],
    signal?: AbortSignal,
    trace?: CallTrace,
  ): Promise<Response> {
    const token = await signInferenceToken(this.#config.signingKey, {
      method: 'POST',
      path,
      parts: parts.map(({ name, type, length, sha256 }) => ({ name, type, length, sha256 })),
    })
    const length = parts.reduce((sum, p) => sum + p.length, 0)
    let res: Response
    try {
      res = await this.#fetch(`${url ?? this.#anyUrl()}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/octet-stream',
          'content-length': String(length),
          ...(trace ? traceHeaders(trace) : {}),
        },
        body: concatParts(parts, length),
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
    const message = body?.message ?? `Inference server answered ${res.status}`
    throw new InferenceFailure(code, message, res.status, retryable, retryAfterOf(res))
  }

  #anyUrl(): string {
    const { urls } = this.#config
    return urls[Math.floor(Math.random() * urls.length)]
  }
}

/**
 * A call made while a client waits: with the request's trace (src/middleware/trace.ts `callTrace`),
 * the inference server's line for it names the same trace id as the edge's.
 */
export interface CallOptions {
  trace?: CallTrace
}

/** A call a client waits on: the client to make it with, and whose it is (for the server's logs). */
export interface InferenceCall {
  client: InferenceClient
  trace?: CallTrace
}

/** Whose call this is, for the inference server's logs. */
export interface CallTrace {
  /** The W3C trace id the call joins (32 hex digits). */
  traceId: string
  /** Sent as `X-Request-Id`: the job's accepting request, or the request a client waits on. */
  requestId?: string
}

function traceHeaders({ traceId, requestId }: CallTrace): Record<string, string> {
  return { [TRACEPARENT_HEADER]: childTraceparent(traceId), ...(requestId ? { 'x-request-id': requestId } : {}) }
}

/** The parts' bytes back to back, as one stream of known length (workerd sends it with Content-Length). */
function concatParts(parts: RequestPart[], length: number): ReadableStream<Uint8Array> {
  const { readable, writable } = new FixedLengthStream(length)
  void (async () => {
    for (const part of parts) {
      if (part.body instanceof Uint8Array) {
        const writer = writable.getWriter()
        await writer.write(part.body)
        writer.releaseLock()
      } else {
        await part.body.pipeTo(writable, { preventClose: true })
      }
    }
    await writable.close()
  })().catch((err) => writable.abort(err).catch(() => {}))
  return readable
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

/** A call that ran past its deadline: the server is taken as lost, and the call may be retried elsewhere. */
export function deadlinePassed(ms: number): InferenceFailure {
  return new InferenceFailure(
    'processor_unavailable',
    `The inference server did not answer within the call's deadline of ${ms} ms`,
    504,
    true,
  )
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
}

function retryAfterOf(res: Response): number | undefined {
  const v = Number(res.headers.get('retry-after'))
  return Number.isFinite(v) && v > 0 ? v : undefined
}

/** How long a client-facing call (a revision) may take before the client gets 503. */
const CALL_NOW_TIMEOUT_MS = 120_000

/**
 * One short editing call while the client waits (a revision's strokes): sent to a server that is
 * ready, outputs stored by `store`. No server ready, or one lost mid-call → 503 with Retry-After.
 */
export async function callNow(
  { client, trace }: InferenceCall,
  route: string,
  parts: RequestPart[],
  store: AnswerHandlers['store'],
  /** What the request's accept was just told (`acceptChecks`): a server that answered ready takes the call without being asked again. */
  known?: Readiness,
): Promise<CallOutcome> {
  const readiness = known?.state === 'ready' && known.url ? known : await client.ready()
  if (readiness.state !== 'ready') {
    throw new ApiError('processor_unavailable', 'No inference server can take the request now', {
      retryAfter: readiness.retryAfter ?? 5,
    })
  }
  try {
    const answer = await client.call(readiness.url, route, parts, AbortSignal.timeout(CALL_NOW_TIMEOUT_MS), trace)
    return await receiveAnswer(answer, { store })
  } catch (err) {
    if (err instanceof InferenceFailure) throw inferenceProblem(err)
    if (isTimeout(err))
      throw new ApiError('processor_unavailable', 'The inference server did not answer in time', { retryAfter: 5 })
    throw err
  }
}

/**
 * A stored image's upright size and type, as the inference server decodes it, while a client
 * waits (an upload's completion, a new project): a failure is the client's problem (`inferenceProblem`).
 */
export async function inspectStored(
  { client, trace }: InferenceCall,
  object: { body: ReadableStream<Uint8Array>; size: number },
  sha256: string,
): Promise<ImageInfo> {
  const image: RequestPart = {
    name: 'image',
    type: 'application/octet-stream',
    length: object.size,
    sha256,
    body: object.body,
  }
  try {
    return await client.inspect(image, { trace })
  } catch (err) {
    if (err instanceof InferenceFailure) throw inferenceProblem(err)
    throw err
  }
}

/** Maps an inference failure seen while a client waits on the request to its SPEC.md §7 problem. */
export function inferenceProblem(err: InferenceFailure, field?: string): ApiError {
  switch (err.kind) {
    case 'client':
      return new ApiError(err.code as ErrorCode, err.message, { field })
    case 'saturated':
    case 'transient':
      return new ApiError('processor_unavailable', 'No inference server can take the request now', {
        retryAfter: err.retryAfter ?? 5,
        cause: err,
      })
    case 'fatal':
      return new ApiError('processing_failed', err.message, { cause: err })
  }
}

/**
 * 503 at accept time: nothing can run the job, so it is refused rather than left to fail. Returns
 * the answer, which a job started at once takes for its first attempt (`ReadyHint`).
 */
export async function assertProcessorAvailable(client: InferenceClient): Promise<Readiness> {
  const readiness = await client.ready()
  if (readiness.state === 'unavailable') {
    throw new ApiError('processor_unavailable', 'No inference server is reachable', {
      retryAfter: readiness.retryAfter ?? 5,
    })
  }
  return readiness
}
