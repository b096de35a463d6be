/**
 * The HTTP surface (docs/inference-protocol.md): health, `/v1/inspect` and `/v1/remove` here; each
 * other capability registers its own routes from its directory (`registerRevise`,
 * `registerExport`, `registerCatalog`, `registerTryOn`) with a `RouteContext`. `createApp` takes every dependency, so tests build it
 * with a stub or a real segmenter and `startServer` binds it to a port.
 */
import type { AddressInfo } from 'node:net'
import { serve, type ServerType } from '@hono/node-server'
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { MAX_IMAGE_BYTES } from '../../src/contract/limits.js'
import { createVerifier, type Verifier } from './auth.js'
import { InferenceError, toInferenceError } from './errors.js'
import { Limiter } from './limiter.js'
import { parseRemoveOptions } from './options.js'
import { registerExport } from './render/route.js'
import { type CatalogGenerator, registerCatalog } from './catalog/route.js'
import { createCpuGenerator } from './catalog/cpu.js'
import { registerRevise } from './editing/route.js'
import { registerRefineRoute } from './refinement/route.js'
import { createCpuTryOn } from './tryon/cpu.js'
import { registerTryOn, type TryOnModel } from './tryon/index.js'
import { inspectImage, removeBackground } from './remove.js'
import { requirePart, streamJob } from './stream.js'
import type { Segmenter } from './segmentation/index.js'

/** One image at the upload limit (SPEC.md §8) plus its options. */
export const MAX_BODY_BYTES = MAX_IMAGE_BYTES + 1024 * 1024
/** Editing routes carry an image at the upload limit and a mask PNG (at most as large), plus options. */
export const MAX_EDIT_BODY_BYTES = 2 * MAX_IMAGE_BYTES + 1024 * 1024

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
  maxBodyBytes?: number
  /** The body limit of the editing routes (`MAX_EDIT_BODY_BYTES`). */
  maxEditBodyBytes?: number
  /** Serves `/v1/catalog` (catalog/): the CPU generator unless configured otherwise. */
  catalog?: CatalogGenerator
  /** Serves `/v1/try-on` (tryon/): the CPU model unless configured otherwise. */
  tryOn?: TryOnModel
}

/** What a capability's routes get from the app (one `register…(app, routes)` per capability). */
export interface RouteContext {
  /** Verifies the token, requires the model, reads the body and checks its parts' hashes. */
  signed(c: Context): Promise<{ parts: Map<string, Uint8Array>; segmenter: Segmenter }>
  limiter: Limiter
  /** The body limit of routes that carry an image and a mask. */
  editBodyLimit: MiddlewareHandler
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
 * model, read the body (≤ 50 MB), check its hash, then run under the limiter.
 * @example const app = createApp({ signingKey, model: { current: await createSegmenter() } });
 */
export function createApp({
  signingKey,
  model,
  limiter = new Limiter(),
  verifier = createVerifier(signingKey),
  maxBodyBytes = MAX_BODY_BYTES,
  maxEditBodyBytes = MAX_EDIT_BODY_BYTES,
  catalog = createCpuGenerator(),
  tryOn = createCpuTryOn(),
}: AppOptions): Hono {
  if (!signingKey) throw new Error('Expected a non-empty signing key')
  const app = new Hono()

  app.onError(async (err, c) => {
    const error = toInferenceError(err)
    if (error.status === 500) console.error(err)
    await drainBody(c, maxBodyBytes)
    return errorResponse(c, error)
  })
  app.notFound((c) =>
    c.json({ code: 'not_found', message: `No route for ${c.req.method} ${c.req.path}`, retryable: false }, 404),
  )

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
      c.header('Retry-After', '1')
      return c.json({ status: 'saturated', ...body }, 503)
    }
    return c.json({ status: 'ready', ...body })
  })

  /** Signed routes: the token first, so an unsigned 50 MB body is never read. */
  const signed = async (c: Context): Promise<{ parts: Map<string, Uint8Array>; segmenter: Segmenter }> => {
    const url = new URL(c.req.url)
    const claims = await verifier.verifyHeader(c.req.header('authorization'), c.req.method, url.pathname + url.search)
    const segmenter = model.current
    if (!segmenter) throw new InferenceError('processor_unavailable', 'The model is still loading', { retryAfter: 1 })
    const parts = verifier.verifyBody(claims, new Uint8Array(await c.req.arrayBuffer()))
    return { parts, segmenter }
  }

  const limitTo = (maxSize: number) =>
    bodyLimit({
      maxSize,
      onError: () => {
        throw new InferenceError('image_too_large', `Expected a body of at most ${maxSize} bytes`)
      },
    })
  const limitBody = limitTo(maxBodyBytes)

  app.post('/v1/inspect', limitBody, async (c) => {
    const { parts } = await signed(c)
    return c.json(await limiter.run(() => inspectImage(requirePart(parts, 'image')), c.req.raw.signal))
  })

  app.post('/v1/remove', limitBody, async (c) => {
    const { parts, segmenter } = await signed(c)
    // Options are checked after the signature: an unsigned caller learns nothing about them.
    const options = parseRemoveOptions(parts.get('options'))
    const image = requirePart(parts, 'image')
    return streamJob(c, limiter, (segmenter.forLevel?.(options.quality) ?? segmenter).version, async (out) => {
      const result = await removeBackground(segmenter, image, options, out.stage, out.signal)
      out.output({ name: 'result', contentType: 'image/png', width: result.width, height: result.height }, result.png)
      return { warnings: result.warnings, timings: { ...result.timings } }
    })
  })

  const routes: RouteContext = { signed, limiter, editBodyLimit: limitTo(maxEditBodyBytes) }
  registerRevise(app, routes)
  registerExport(app, routes)
  registerRefineRoute(app, { signed, limiter })
  registerCatalog(app, routes, catalog)
  registerTryOn(app, routes, tryOn)

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
