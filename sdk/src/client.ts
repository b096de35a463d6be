/**
 * @module
 * `Cutout`: the typed API (`cutout.api`, openapi-fetch over the generated `paths`) behind one
 * transport that adds the bearer token, an `Idempotency-Key` on creation POSTs, and retries; plus
 * the hand-written calls most programs need (uploads, removals, batches, jobs, usage, keys).
 * Only `fetch`, `Request`, `Blob` and Web Crypto are used, so it runs in Node 22.12+ and browsers.
 */
import createClient, { type Client } from 'openapi-fetch'
import { DEFAULT_REMOVAL_OPTIONS } from './contract.js'
import { Credentials, type SessionStore, type TokenPair } from './auth.js'
import { CutoutProblem, endedProblem } from './problem.js'
import { isIdempotent, type RetryOptions, retryRuleFor, withRetries } from './retry.js'
import type { components, paths } from './schema.js'
import { sniffImageType, toBlob, type ImageInput } from './image.js'
import { waitForJob, type WaitOptions } from './wait.js'

export type Schemas = components['schemas']
export type Job = Schemas['Job']
export type Upload = Schemas['Upload']
export type Batch = Schemas['Batch']
export type Usage = Schemas['Usage']
export type ApiKey = Schemas['ApiKey']
export type RemovalOptions = Schemas['RemovalOptions']
export type TryOnOptions = Schemas['TryOnOptions']
export type CatalogImage = Schemas['CatalogImage']
/** Where a job's image comes from: a ready upload or a public URL. */
export type Source = { uploadId: string } | { sourceUrl: string }
export type ListJobsQuery = NonNullable<paths['/v1/jobs']['get']['parameters']['query']>
export type ListCatalogImagesQuery = NonNullable<paths['/v1/catalog-images']['get']['parameters']['query']>

export interface CutoutOptions {
  /** The API origin, e.g. `https://api.example` or `http://127.0.0.1:8787`. */
  baseUrl: string
  /** An API key (`sk_live_…`); or use `session`. */
  apiKey?: string
  /** A signed-in session, refreshed as needed and saved back to the store. */
  session?: SessionStore
  /** Retry rules; `false` sends each request once. */
  retry?: RetryOptions | false
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: (request: Request) => Promise<Response>
}

type UploadType = NonNullable<components['schemas']['UploadRequest']['contentType']>
/**
 * The media types POST /v1/uploads accepts (the API refuses any other with 400). A runtime copy of
 * the contract's list, held to it by the compiler: `satisfies` refuses a type the API does not
 * list, and `_AllUploadTypes` one the API lists that is missing here.
 */
const UPLOAD_TYPE_LIST = [
  'application/octet-stream',
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/avif',
  'image/heic',
  'image/heif',
] as const satisfies readonly UploadType[]
type Holds<T extends true> = T
type _AllUploadTypes = Holds<Exclude<UploadType, (typeof UPLOAD_TYPE_LIST)[number]> extends never ? true : false>
const UPLOAD_TYPES: ReadonlySet<string> = new Set<string>(UPLOAD_TYPE_LIST)

/** The defaults of the removal options, the API's own (generated from src/contract); anything given replaces them. */
export const DEFAULT_OPTIONS: RemovalOptions = DEFAULT_REMOVAL_OPTIONS

/**
 * The fields of POST /v1/catalog-images besides the references, each optional (the API applies
 * its defaults: 1024×1024, `soft`, `hero`, `#FFFFFF`, a random seed); each is sent as its
 * multipart part. The contract's own type, so its bounds and defaults are documented on each.
 */
export type CatalogImageOptions = Partial<Omit<Schemas['CatalogImageMultipart'], 'references'>>

/** A catalog image: its PNG, its id and the seed that makes it again. */
export interface CatalogImageResult {
  id: string
  seed: number
  bytes: Uint8Array
  contentType: string
  /** Where it can be read again for 24 hours, absolute (GET /v1/catalog-images/{id}, with the credential). */
  url: string
}

export interface RemoveResult {
  job: Job
  /** The result image (PNG unless the job says otherwise). */
  bytes: Uint8Array
  contentType: string
}

/**
 * The headers of a job-creating call: the contract requires the key, and one made here is the one
 * every retry of this call carries; `wait` (0–8 s) becomes `Prefer: wait`.
 */
function jobHeaders(extra: { wait?: number; idempotencyKey?: string }) {
  const header: { 'idempotency-key': string; prefer?: string } = {
    'idempotency-key': extra.idempotencyKey ?? crypto.randomUUID(),
  }
  if (extra.wait) header.prefer = `wait=${extra.wait}`
  return header
}

/** What the SDK's own calls return for a body, or a thrown `CutoutProblem`. */
async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call
  if (!response.ok || error !== undefined) throw CutoutProblem.fromBody(response, error)
  return data as T
}

export class Cutout {
  /** Every operation of /openapi.json, typed: `cutout.api.GET('/v1/jobs/{id}', …)`. */
  readonly api: Client<paths>
  readonly baseUrl: string
  readonly credentials: Credentials
  readonly #fetch: (request: Request) => Promise<Response>
  readonly #retry: RetryOptions | false

  constructor(options: CutoutOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#fetch = options.fetch ?? ((request) => fetch(request))
    this.#retry = options.retry ?? {}
    const source = options.apiKey
      ? { apiKey: options.apiKey }
      : options.session
        ? { session: options.session }
        : undefined
    this.credentials = new Credentials(source, (token) => this.#refresh(token))
    this.api = createClient<paths>({ baseUrl: this.baseUrl, fetch: (request) => this.send(request) })
  }

  /**
   * One logical request: the idempotency key is fixed here, once, so every retry carries the same
   * key and the API replays the first answer instead of doing the work twice. `idempotent: true`
   * says a POST is safe to repeat although it carries no `Idempotency-Key` header (an MCP call that
   * only reads, or carries its own key in its arguments), so a lost connection or a 5xx is retried.
   */
  async send(request: Request, options: { retry?: boolean; idempotent?: boolean } = {}): Promise<Response> {
    const rule = retryRuleFor(request.method, new URL(request.url).pathname)
    if (rule === 'idempotency-key' && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', crypto.randomUUID())
    }
    const attempt = (req: Request) => this.#authorized(req)
    if (this.#retry === false || options.retry === false) return attempt(request)
    const idempotent = options.idempotent || isIdempotent(request) || rule === 'safe'
    return withRetries(request, attempt, this.#retry, idempotent)
  }

  /** Sends with the bearer token, renewing a session once after a 401. */
  async #authorized(request: Request): Promise<Response> {
    const retryCopy = this.credentials.isSession ? request.clone() : undefined
    const token = await this.credentials.token()
    if (token) request.headers.set('authorization', `Bearer ${token}`)
    const res = await this.#fetch(request)
    if (res.status !== 401 || !retryCopy || !token) return res
    await res.body?.cancel().catch(() => undefined)
    retryCopy.headers.set('authorization', `Bearer ${await this.credentials.renew(token)}`)
    return this.#fetch(retryCopy)
  }

  async #refresh(refreshToken: string): Promise<TokenPair> {
    const request = this.#request('/v1/auth/refresh', { method: 'POST', json: { refreshToken } })
    const res = await withRetries(request, this.#fetch, this.#retry || { maxRetries: 0 })
    if (!res.ok) throw await CutoutProblem.fromResponse(res)
    return (await res.json()) as TokenPair
  }

  #request(path: string, init: RequestInit & { json?: unknown } = {}): Request {
    const { json, ...rest } = init
    const headers = new Headers(rest.headers)
    if (json !== undefined) headers.set('content-type', 'application/json')
    return new Request(new URL(path, `${this.baseUrl}/`), {
      ...rest,
      headers,
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    })
  }

  /**
   * A request to a URL the API handed out (upload target, result). Our own origin goes through the
   * transport with the credential; another origin (a presigned storage URL) gets no credential.
   */
  async #followUrl(url: string, init: RequestInit): Promise<Response> {
    const target = new URL(url, `${this.baseUrl}/`)
    const request = new Request(target, init)
    if (target.origin === new URL(this.baseUrl).origin) return this.send(request)
    return this.#retry === false ? this.#fetch(request) : withRetries(request, this.#fetch, this.#retry)
  }

  /**
   * file/bytes → POST /v1/uploads → PUT the content → complete: the ready upload, verified. The type
   * declared (`contentType`, else the Blob's) is sent when the API lists it; any other (a browser's
   * `image/jpg`, none at all) is replaced by the type the bytes' signature shows, or
   * `application/octet-stream`, which the API sniffs itself.
   */
  async upload(input: ImageInput, options: { contentType?: string; signal?: AbortSignal } = {}): Promise<Upload> {
    const blob = await toBlob(input)
    const declared = (options.contentType ?? blob.type).split(';')[0].trim().toLowerCase()
    const contentType = UPLOAD_TYPES.has(declared) ? declared : await sniffImageType(blob)
    const created = await unwrap(
      this.api.POST('/v1/uploads', {
        body: { contentType: contentType as Schemas['UploadRequest']['contentType'] },
        signal: options.signal,
      }),
    )
    const put = await this.#followUrl(created.uploadUrl, {
      method: 'PUT',
      headers: created.uploadHeaders ?? { 'content-type': contentType },
      body: blob,
      signal: options.signal,
    })
    if (!put.ok) throw await CutoutProblem.fromResponse(put)
    await put.body?.cancel().catch(() => undefined)
    return unwrap(
      this.api.POST('/v1/uploads/{id}/complete', { params: { path: { id: created.id } }, signal: options.signal }),
    )
  }

  /** POST /v1/removals for an upload or a public URL. `wait` (0–8 s) lets a quick job finish in the call. */
  async createRemoval(
    source: { uploadId: string } | { sourceUrl: string },
    options: Partial<RemovalOptions> = {},
    extra: { wait?: number; idempotencyKey?: string; signal?: AbortSignal } = {},
  ): Promise<Job> {
    const header = jobHeaders(extra)
    return unwrap(
      this.api.POST('/v1/removals', {
        params: { header },
        body: { ...source, options: { ...DEFAULT_OPTIONS, ...options } },
        signal: extra.signal,
      }),
    )
  }

  /** One batch over ready uploads (1–100), queued atomically. */
  async createBatch(uploadIds: string[], options: Partial<RemovalOptions> = {}, idempotencyKey?: string) {
    return unwrap(
      this.api.POST('/v1/batches', {
        params: { header: { 'idempotency-key': idempotencyKey ?? crypto.randomUUID() } },
        body: { uploadIds, options: { ...DEFAULT_OPTIONS, ...options } },
      }),
    )
  }

  getBatch(id: string): Promise<Batch> {
    return unwrap(this.api.GET('/v1/batches/{id}', { params: { path: { id } } }))
  }

  getJob(id: string, signal?: AbortSignal): Promise<Job> {
    return unwrap(this.api.GET('/v1/jobs/{id}', { params: { path: { id } }, signal }))
  }

  listJobs(query: ListJobsQuery = {}) {
    return unwrap(this.api.GET('/v1/jobs', { params: { query } }))
  }

  cancelJob(id: string): Promise<Job> {
    return unwrap(this.api.DELETE('/v1/jobs/{id}', { params: { path: { id } } }))
  }

  /** Resolves with the job once it is terminal (SSE, falling back to polling). */
  waitForJob(id: string, options: WaitOptions = {}): Promise<Job> {
    return waitForJob(this, id, options)
  }

  /** The bytes of a succeeded job's result. */
  async downloadResult(job: Job, signal?: AbortSignal): Promise<{ bytes: Uint8Array; contentType: string }> {
    const url = job.result?.url ?? `/v1/jobs/${job.id}/result`
    const res = await this.#followUrl(url, { signal })
    if (!res.ok) throw await CutoutProblem.fromResponse(res)
    const contentType = res.headers.get('content-type') ?? job.result?.contentType ?? 'application/octet-stream'
    return { bytes: new Uint8Array(await res.arrayBuffer()), contentType }
  }

  /**
   * Upload, remove, wait, download: the cutout of `input` in one call. A job that ends failed or
   * canceled is thrown as a `CutoutProblem` with the job's error code.
   */
  async removeBackground(
    input: ImageInput,
    options: Partial<RemovalOptions> = {},
    extra: WaitOptions = {},
  ): Promise<RemoveResult> {
    const upload = await this.upload(input, { signal: extra.signal })
    const created = await this.createRemoval({ uploadId: upload.id }, options, { wait: 8, signal: extra.signal })
    return this.#finished(created, extra)
  }

  /**
   * POST /v1/virtual-try-ons (experimental): `garment` worn by the person in `person`, each an
   * upload or a public URL. `wait` (0–8 s) lets a quick job finish in the call.
   */
  async createTryOn(
    person: Source,
    garment: Source,
    options: TryOnOptions,
    extra: { wait?: number; idempotencyKey?: string; signal?: AbortSignal } = {},
  ): Promise<Job> {
    const header = jobHeaders(extra)
    return unwrap(
      this.api.POST('/v1/virtual-try-ons', {
        params: { header },
        body: { person, garment, options },
        signal: extra.signal,
      }),
    )
  }

  /**
   * Upload both photos, try the garment on, wait, download: the try-on image in one call, its
   * warnings on `job.result`. A job that ends failed or canceled is thrown as a `CutoutProblem`.
   */
  async tryOn(
    person: ImageInput,
    garment: ImageInput,
    options: TryOnOptions,
    extra: WaitOptions = {},
  ): Promise<RemoveResult> {
    const [p, g] = await Promise.all([
      this.upload(person, { signal: extra.signal }),
      this.upload(garment, { signal: extra.signal }),
    ])
    const created = await this.createTryOn({ uploadId: p.id }, { uploadId: g.id }, options, {
      wait: 8,
      signal: extra.signal,
    })
    return this.#finished(created, extra)
  }

  /**
   * POST /v1/catalog-images: a product photo from one to four references (front, back, side,
   * detail), sent in the request, in order. The API makes it while the call waits, so this one
   * call is the whole of it: the PNG, its id and its seed. An `Idempotency-Key` is made unless
   * one is given, and every retry carries it, so a retried call returns the first image, charged
   * once. A reference the API refuses is thrown with its `field` (`references.1` is the second).
   */
  async createCatalogImage(
    references: ImageInput[],
    options: CatalogImageOptions = {},
    extra: { idempotencyKey?: string; signal?: AbortSignal } = {},
  ): Promise<CatalogImageResult> {
    const body = new FormData()
    for (const [i, reference] of references.entries()) {
      const blob = await toBlob(reference)
      body.append('references', blob, blob instanceof File ? blob.name : `reference-${i}`)
    }
    for (const [name, value] of Object.entries(options)) {
      if (value !== undefined) body.append(name, String(value))
    }
    const headers = extra.idempotencyKey ? { 'idempotency-key': extra.idempotencyKey } : undefined
    const res = await this.send(
      this.#request('/v1/catalog-images', { method: 'POST', body, headers, signal: extra.signal }),
    )
    return catalogImageOf(res, this.baseUrl)
  }

  /** GET /v1/catalog-images/{id}: a catalog image made by this workspace, again (for 24 hours). */
  async getCatalogImage(id: string, signal?: AbortSignal): Promise<CatalogImageResult> {
    const res = await this.send(this.#request(`/v1/catalog-images/${encodeURIComponent(id)}`, { signal }))
    return catalogImageOf(res, this.baseUrl)
  }

  /** The workspace's catalog images, newest first, with the fields and seed each was made with. */
  listCatalogImages(query: ListCatalogImagesQuery = {}) {
    return unwrap(this.api.GET('/v1/catalog-images', { params: { query } }))
  }

  /** The job once terminal, and its result's bytes; a job that did not succeed is thrown. */
  async #finished(created: Job, extra: WaitOptions): Promise<RemoveResult> {
    const job = await this.waitForJob(created.id, extra)
    if (job.status !== 'succeeded') throw jobProblem(job)
    return { job, ...(await this.downloadResult(job, extra.signal)) }
  }

  usage(): Promise<Usage> {
    return unwrap(this.api.GET('/v1/usage'))
  }

  listApiKeys() {
    return unwrap(this.api.GET('/v1/api-keys'))
  }

  createApiKey(body: Schemas['ApiKeyCreate'] = {}) {
    return unwrap(this.api.POST('/v1/api-keys', { body }))
  }

  async revokeApiKey(id: string): Promise<void> {
    await unwrap(this.api.DELETE('/v1/api-keys/{id}', { params: { path: { id } } }))
  }

  /** Revokes the session behind a refresh token (POST /v1/auth/logout). */
  async signOut(refreshToken: string): Promise<void> {
    const res = await this.#fetch(this.#request('/v1/auth/logout', { method: 'POST', json: { refreshToken } }))
    if (!res.ok) throw await CutoutProblem.fromResponse(res)
  }

  /** A request sent once, without credentials or retries (the device flow paces itself). */
  async sendOnce(path: string, init: RequestInit & { json?: unknown }): Promise<Response> {
    return this.#fetch(this.#request(path, init))
  }
}

/** A job that ended failed or canceled: a problem with the job's own error code, and the job. */
export class JobFailedError extends CutoutProblem {
  constructor(readonly job: Job) {
    const { status, body } = endedProblem(job, `job ${job.id}`)
    super(status, body)
  }
}

export const jobProblem = (job: Job) => new JobFailedError(job)

/** A catalog image answer (201 or 200 `image/png`) read, or its problem thrown. */
async function catalogImageOf(res: Response, baseUrl: string): Promise<CatalogImageResult> {
  if (!res.ok) throw await CutoutProblem.fromResponse(res)
  const id = res.headers.get('x-catalog-image-id') ?? ''
  const url = new URL(res.headers.get('location') ?? `/v1/catalog-images/${id}`, `${baseUrl}/`)
  return {
    id,
    seed: Number(res.headers.get('x-generation-seed')),
    bytes: new Uint8Array(await res.arrayBuffer()),
    contentType: res.headers.get('content-type') ?? 'image/png',
    url: url.href,
  }
}
