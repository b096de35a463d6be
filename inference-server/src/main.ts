/**
 * Entry point: `npm start -w inference-server` (or `tsx src/main.ts`).
 * Listens first (so /health/live answers during the few seconds the model takes to load), then
 * loads the one model and reports ready.
 */
import sharp from 'sharp'
import { catalogConfigFromEnv, createCatalogGenerator } from './catalog/index.js'
import { Limiter } from './limiter.js'
import { errorFields, log } from './log.js'
import { QUALITIES } from './options.js'
import { runtimeFromEnv } from './segmentation/model.js'
import { createLevelSegmenters, levelModelsFromEnv, memoryBudgetFromEnv } from './segmentation/per-level.js'
import { createStubSegmenter, segmenterKindFromEnv, stubDelayFromEnv } from './segmentation/stub.js'
import { glibcVersion, mallocWarning, sessionMemoryFromEnv } from './segmentation/session-memory.js'
import { createTryOnModel, tryOnConfigFromEnv } from './tryon/index.js'
import { createApp, startServer, type SegmenterSlot } from './server.js'

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`Expected integer of at least ${min} for ${name} but received ${raw} of type string`)
  }
  return value
}

const signingKey = process.env.INFERENCE_SIGNING_KEY
if (!signingKey) {
  log('error', 'INFERENCE_SIGNING_KEY is required')
  process.exit(1)
}
const port = intFromEnv('PORT', 7071, 0)
const host = process.env.HOST || '127.0.0.1'
// One session with 2 intra-op threads by default. Two 1-thread sessions side by side gave 22.4
// images per minute at 1 MP through the API against 20.6 (bench/results/throughput-issue14.json:
// one round of two even, the other +15 %), for 1.27 GB RSS instead of 0.78 GB (over DESIGN.md's
// 1.2 GB) and twice the latency of a lone request: not worth it here (docs/quality.md "Throughput").
// Requests run at most one per session.
const sessions = intFromEnv('INFERENCE_SESSIONS', 1, 1)
const limiter = new Limiter({
  concurrency: intFromEnv('INFERENCE_CONCURRENCY', sessions, 1),
  queueLimit: intFromEnv('INFERENCE_QUEUE_LIMIT', 8, 0),
})
const threads = intFromEnv('INFERENCE_THREADS', 2, 1)
const runtime = runtimeFromEnv()
// INFERENCE_SEGMENTER=stub: test-only masks without ONNX (segmentation/stub.ts); a bad value stops the start.
const segmenterKind = segmenterKindFromEnv(process.env)
const stubDelayMs = stubDelayFromEnv(process.env)
const providers = process.env.INFERENCE_PROVIDERS || 'cpu'
const spinning = process.env.INFERENCE_SPIN === '1'
// INFERENCE_MEMORY_ARENA=0: a run's memory goes back to the system after it, at twice the model time
// (segmentation/session-memory.ts).
const memory = sessionMemoryFromEnv(process.env)
// libvips: no operation cache (every request's pixels are new, and the cache only holds memory),
// and one worker thread: decode and PNG encode gained nothing from a second one here (bench/), and
// the model wants the other core. SHARP_CONCURRENCY overrides.
sharp.cache(false)
sharp.concurrency(intFromEnv('SHARP_CONCURRENCY', 1, 0))
const model: SegmenterSlot = {}
// CATALOG_BACKEND=cpu|remote and its settings (catalog/generator.ts): a bad value stops the start.
const catalog = createCatalogGenerator(catalogConfigFromEnv(process.env))
// TRYON_BACKEND=cpu|remote and its settings (tryon/model.ts): a bad value stops the start.
const tryOn = createTryOnModel(tryOnConfigFromEnv(process.env))

// METRICS_TOKEN: the bearer token a scraper sends to GET /metrics; unset, /metrics is off (metrics.ts).
const metricsToken = process.env.METRICS_TOKEN || undefined
const app = createApp({ signingKey, model, limiter, catalog, tryOn, metricsToken })
const running = await startServer(app, { port, host })
log('info', `inference server listening on ${running.url}`, {
  url: running.url,
  catalogBackend: catalog.backend,
  metrics: metricsToken ? 'on' : 'off',
})
const mallocAdvice = mallocWarning(process.env, glibcVersion())
if (mallocAdvice) log('warn', mallocAdvice)

let stopping = false
async function shutdown(signal: string): Promise<void> {
  if (stopping) return
  stopping = true
  log('info', `${signal} received, shutting down`)
  // Stop accepting, let in-flight requests finish, then free the native session.
  const forced = setTimeout(() => process.exit(1), 10_000).unref()
  await running.close().catch(() => undefined)
  await model.current?.close().catch(() => undefined)
  await catalog.close().catch(() => undefined)
  await tryOn.close().catch(() => undefined)
  clearTimeout(forced)
  process.exit(0)
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))

try {
  // The pose models load from the package in their thread while the segmentation model loads.
  const poseReady = tryOn.ready()
  if (segmenterKind === 'stub') log('warn', 'INFERENCE_SEGMENTER=stub: masks are a test stub, not the model')
  const segmenter =
    segmenterKind === 'stub'
      ? createStubSegmenter({ delayMs: stubDelayMs })
      : // SEGMENTATION_MODEL[_<LEVEL>] and SEGMENTATION_PROFILE[_<LEVEL>] (docs/models.md): each
        // distinct model loads once; an unknown graph or a set that does not fit stops the start.
        await createLevelSegmenters(levelModelsFromEnv(process.env), {
          runtime,
          sessions,
          threads,
          providers: providers.split(','),
          spinning,
          memory,
          memoryBudget: memoryBudgetFromEnv(process.env),
        })
  await poseReady
  model.current = segmenter
  const perLevel = segmenter.forLevel
    ? ` (levels: ${QUALITIES.map((q) => `${q} ${segmenter.forLevel?.(q).version}`).join(', ')})`
    : ''
  log(
    'info',
    `model ready ${model.current.version}${perLevel} (runtime ${runtime}, providers ${providers}, ${sessions} × ${threads} threads)`,
    { modelVersion: model.current.version, runtime, providers, sessions, threads },
  )
} catch (err) {
  log('error', 'start failed', errorFields(err))
  process.exit(1)
}
