/**
 * The app: health here; every capability registers its own routes from its directory (removal/,
 * editing/, render/, refinement/, catalog/, tryon/) with the `RouteContext` of http.ts.
 * `createApp` takes every dependency, so tests build it with a stub or a real segmenter, and
 * `startServer` binds it to a port.
 */
import type { AddressInfo } from 'node:net'
import { serve, type ServerType } from '@hono/node-server'
import { Hono, type Context } from 'hono'
import { createVerifier, type Verifier } from './auth.js'
import { InferenceError, toInferenceError } from './errors.js'
import {
  BODY_LIMITS,
  BRIEF_RETRY_AFTER_S,
  type BodyLimits,
  bodyLimiter,
  type RouteContext,
  type Routes,
  type SignedRequest,
} from './http.js'
import { Limiter } from './limiter.js'
import { errorFields, log } from './log.js'
import { Metrics, metricsRoutes, observeRequests } from './metrics.js'
import { type CatalogGenerator, catalogRoutes } from './catalog/route.js'
import { createCpuGenerator } from './catalog/cpu.js'
import { reviseRoutes } from './editing/route.js'
import { refineRoutes } from './refinement/route.js'
import { removalRoutes } from './removal/route.js'
import { exportRoutes } from './render/route.js'
import { createCpuTryOn } from './tryon/cpu.js'
import { type TryOnModel, tryOnRoutes } from './tryon/index.js'
import type { Segmenter } from './segmentation/index.js'

/** Holds the model once it has loaded; routes answer 503 `processor_unavailable` until then. */
export interface SegmenterSlot {
  current?: Segmenter
}

export interface AppOptions {
  /** `INFERENCE_SIGNING_KEY`. */
  signingKey: string
  model: SegmenterSlot
  limiter?: Limiter
  verifier?: Verifier
  /** Overrides of http.ts `BODY_LIMITS` (tests: a small limit without a large body). */
  bodyLimits?: Partial<BodyLimits>
  /** Serves `/v1/catalog` (catalog/): the CPU generator unless configured otherwise. */
  catalog?: CatalogGenerator
  /** Serves `/v1/try-on` (tryon/): the CPU model unless configured otherwise. */
  tryOn?: TryOnModel
  /** `METRICS_TOKEN`: the bearer token `/metrics` asks for; unset, `/metrics` answers 404 (metrics.ts). */
  metricsToken?: string
}

const errorResponse = (c: Context, err: InferenceError): Response => {
  if (err.retryAfter !== undefined) c.header('Retry-After', String(err.retryAfter))
  return c.json(err.toJSON(), err.status)
}

/**
 * Reads and discards an unread request body before an early error response. Answering while
 * the client is still uploading makes Node drop the keep-alive socket, and the client's next
 * request on it fails with "other side closed". Past `limit` bytes we stop and close instead.
 */
async function drainBody(c: Context, limit: number): Promise<void> {
  const body = c.req.raw.body
  if (!body || c.req.raw.bodyUsed) return
  let read = 0
  try {
    const reader = body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      read += value.byteLength
      if (read > limit) {
        await reader.cancel()
        break
      }
    }
  } catch {
    // The client went away or the stream was already consumed elsewhere: nothing to keep alive.
  }
  c.header('Connection', 'close')
}

/**
 * Builds the app. Per signed request: verify the token (before reading the body), require the
 * model, read the body (within its route's limit), check its hash, then run under the limiter.
 * @example const app = createApp({ signingKey, model: { current: await createSegmenter() } });
 */
export function createApp({
  signingKey,
  model,
  limiter = new Limiter(),
  verifier = createVerifier(signingKey),
  bodyLimits,
  catalog = createCpuGenerator(),
  tryOn = createCpuTryOn(),
  metricsToken,
}: AppOptions): Hono {
  if (!signingKey) throw new Error('Expected a non-empty signing key')
  const limits: BodyLimits = { ...BODY_LIMITS, ...bodyLimits }
  const app = new Hono()
  const metrics = new Metrics(limiter, model)

  app.onError(async (err, c) => {
    const error = toInferenceError(err)
    if (error.status === 500)
      log('error', 'request failed', { ...errorFields(err), traceId: c.get('telemetry')?.traceId })
    await drainBody(c, limits.image)
    return errorResponse(c, error)
  })
  app.notFound((c) =>
    c.json({ code: 'not_found', message: `No route for ${c.req.method} ${c.req.path}`, retryable: false }, 404),
  )

  // Every request is counted and logged once, here (metrics.ts), whatever route answers it.
  app.use('*', observeRequests(metrics))

  // @hono/node-server makes a request's AbortSignal lazily and aborts only one that exists when the
  // connection closes: make it first, so a caller that leaves while its request waits is noticed.
  app.use('/v1/*', async (c, next) => {
    void c.req.raw.signal
    await next()
  })

  app.get('/health/live', (c) => c.json({ status: 'ok' }))
  app.get('/health/ready', (c) => {
    const segmenter = model.current
    if (!segmenter) return c.json({ status: 'loading' }, 503)
    const body = { modelVersion: segmenter.version, ...limiter.stats }
    // Saturated: the next request would be refused. 503 + Retry-After like that refusal; the edge
    // reads `status: "saturated"` as "busy, keep the job queued" rather than "unavailable".
    if (limiter.saturated) {
      c.header('Retry-After', String(BRIEF_RETRY_AFTER_S))
      return c.json({ status: 'saturated', ...body }, 503)
    }
    return c.json({ status: 'ready', ...body })
  })

  /** Signed routes: the token first, so an unsigned 50 MB body is never read. */
  const signed = async (c: Context): Promise<SignedRequest> => {
    const url = new URL(c.req.url)
    const claims = await verifier.verifyHeader(c.req.header('authorization'), c.req.method, url.pathname + url.search)
    const segmenter = model.current
    if (!segmenter) {
      throw new InferenceError('processor_unavailable', 'The model is still loading', {
        retryAfter: BRIEF_RETRY_AFTER_S,
      })
    }
    const parts = verifier.verifyBody(claims, new Uint8Array(await c.req.arrayBuffer()))
    return { parts, segmenter }
  }
  const ctx: RouteContext = { signed, limiter, bodyLimit: bodyLimiter(limits) }

  // One registration per capability, each in its own directory.
  const capabilities: Routes[] = [
    removalRoutes,
    reviseRoutes,
    exportRoutes,
    refineRoutes,
    catalogRoutes(catalog),
    tryOnRoutes(tryOn),
    metricsRoutes(metrics, metricsToken),
  ]
  for (const register of capabilities) register(app, ctx)

  return app
}

export interface RunningServer {
  server: ServerType
  /** e.g. `http://127.0.0.1:7071` (the real port when 0 was asked). */
  url: string
  close(): Promise<void>
}

/**
 * Listens on `host:port` (port 0 picks a free one, for tests).
 * @example const { url, close } = await startServer(app, { port: 0 });
 */
export function startServer(
  app: Hono,
  { port = 7071, host = '127.0.0.1' }: { port?: number; host?: string } = {},
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname: host }, (info: AddressInfo) => {
      resolve({
        server,
        url: `http://${host}:${info.port}`,
        close: () => new Promise<void>((done, fail) => server.close((err) => (err ? fail(err) : done()))),
      })
    })
    server.once('error', reject)
  })
}
