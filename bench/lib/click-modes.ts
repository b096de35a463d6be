/**
 * The two ways bench/clicks.ts runs its protocol (bench/lib/click-protocol.ts):
 * - direct: no HTTP. The start mask is the inference server's own `balanced` alpha (levelAlpha,
 *   then the removal's raw alpha), each click `refineMask` with `{ points: [newest], earlierPoints }`
 *   on the click before's mask; the model behind a disk cache (cached-segmenter.ts), so a rerun
 *   costs no model time: for iterating on the refinement algorithm.
 * - api: the public API of a local stack (stack.ts: the inference server and `wrangler dev`): a
 *   `balanced` removal of the uploaded photo, a project from it, then per click
 *   `POST …/refinements {points: [newest], baseRevisionId}`, its end followed on the project's
 *   event stream, and the new revision's mask. The measurement of record.
 */
import type { RefinementPoint } from '../../src/contract/editing.js'
import { applyAlpha } from '../../inference-server/src/imaging/alpha.js'
import { decodeImage } from '../../inference-server/src/imaging/decode.js'
import type { RgbImage } from '../../inference-server/src/imaging/types.js'
import { refineMask } from '../../inference-server/src/refinement/index.js'
import { levelAlpha } from '../../inference-server/src/remove.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../../inference-server/src/segmentation/per-level.js'
import type { GtPhoto } from './gt-photos.js'
import { cachedSegmenter } from './cached-segmenter.js'
import type { ClickMode } from './click-protocol.js'
import { sharp } from './deps.js'
import { type ApiStack, startApi, startInference } from './stack.js'

/** The removal a project starts from: `balanced`, its alpha as the model gave it. */
export const START_OPTIONS = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const

/** Direct mode: the server's own code in this process, the model's masks cached on disk. */
export async function directMode(): Promise<ClickMode> {
  const model = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)))
  const images = new Map<string, RgbImage>()
  return {
    name: 'direct',
    async start(photo) {
      const t0 = performance.now()
      const model0 = model.stats.modelMs
      const { image } = await decodeImage(photo.bytes)
      images.set(photo.name, image)
      const level = await levelAlpha(model, image, START_OPTIONS.quality)
      const mask = await applyAlpha(level.mask, START_OPTIONS.alpha)
      return { mask: mask.data, ms: performance.now() - t0, modelMs: model.stats.modelMs - model0 }
    },
    async refine(photo, base, clicks) {
      const image = images.get(photo.name)
      if (!image) throw new Error(`${photo.name}: refine before start`)
      const earlierPoints = clicks.slice(0, -1)
      const request = { points: clicks.slice(-1), ...(earlierPoints.length ? { earlierPoints } : {}) }
      const t0 = performance.now()
      const model0 = model.stats.modelMs
      const { mask } = await refineMask(
        model,
        image,
        { data: new Uint8Array(base), width: photo.width, height: photo.height },
        request,
      )
      return { mask: mask.data, ms: performance.now() - t0, modelMs: model.stats.modelMs - model0 }
    },
    info: () => ({
      segmenter: model.version,
      cache: { ...model.stats, modelMs: Math.round(model.stats.modelMs) },
    }),
    close: () => model.close(),
  }
}

/** A refinement as the API shows it (the fields read here). */
interface RefinementView {
  id: string
  status: string
  revisionId: string | null
  error: { code: string; message: string } | null
}

/**
 * A project's event stream (`GET /v1/projects/{id}/events`, server-sent events), read in the
 * background: `ended(id)` resolves with the refinement as it ended.
 */
function projectEvents(url: string, apiKey: string) {
  const ended = new Map<string, RefinementView>()
  const waiters = new Map<string, (r: RefinementView) => void>()
  const abort = new AbortController()
  const deliver = (r: RefinementView) => {
    ended.set(r.id, r)
    waiters.get(r.id)?.(r)
  }
  const pump = (async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` }, signal: abort.signal })
    if (res.status !== 200 || !res.body) throw new Error(`events: ${res.status} ${await res.text()}`)
    let buffer = ''
    for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
      buffer += chunk.replace(/\r\n/g, '\n')
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n')
        if (!data) continue
        const event = JSON.parse(data) as { type: string; data: RefinementView }
        if (event.type.startsWith('image.refinement.')) deliver(event.data)
      }
    }
  })().catch((err) => {
    if (!abort.signal.aborted) process.stderr.write(`events stream ended: ${err}\n`)
  })
  return {
    /** The refinement once it has ended; `poll` reads it when no event came within a while (a lost stream). */
    ended(id: string, poll: () => Promise<RefinementView>, timeoutMs = 300_000): Promise<RefinementView> {
      const seen = ended.get(id)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs
        const timer = setInterval(async () => {
          try {
            const r = await poll()
            if (!['queued', 'processing'].includes(r.status)) deliver(r)
            else if (Date.now() > deadline) throw new Error(`refinement ${id} still ${r.status} after ${timeoutMs} ms`)
          } catch (err) {
            clearInterval(timer)
            reject(err)
          }
        }, 5000)
        waiters.set(id, (r) => {
          clearInterval(timer)
          waiters.delete(id)
          resolve(r)
        })
      })
    },
    async close() {
      abort.abort()
      await pump
    },
  }
}

/** An 8-bit grayscale mask PNG as one byte per pixel, checked to be `width`×`height`. */
async function maskPixels(png: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  const { data, info } = await sharp(png).extractChannel(0).raw().toBuffer({ resolveWithObject: true })
  if (info.width !== width || info.height !== height)
    throw new Error(`mask is ${info.width}×${info.height}, the photo ${width}×${height}`)
  return new Uint8Array(data.buffer, data.byteOffset, data.length)
}

/** API mode: a local stack's public API, one project per photo. */
export async function apiMode({ verbose = false } = {}): Promise<ClickMode> {
  // stack.ts keeps wrangler's network inspection off over a WebSocket (scripts/lib/inspector-guard.ts).
  if (typeof WebSocket === 'undefined')
    throw new Error('API mode needs Node 22, or Node 20 with --experimental-websocket')
  const server = await startInference({}, verbose)
  let api: ApiStack
  try {
    // A click costs two requests and a stream; the workspace's request rate is not what is measured.
    api = await startApi(server, { vars: { RATE_LIMIT_PER_MINUTE: '100000' }, verbose })
  } catch (err) {
    await server.stop()
    throw err
  }
  const auth = { authorization: `Bearer ${api.apiKey}` }
  const at = (p: string) => new URL(p, api.url).toString()
  const call = async <T>(method: string, path: string, body?: unknown, ok = [200, 201, 202]): Promise<T> => {
    const res = await fetch(at(path), {
      method,
      headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (!ok.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return JSON.parse(text) as T
  }
  const mask = async (projectId: string, revisionId: string, photo: GtPhoto) => {
    const res = await fetch(at(`/v1/projects/${projectId}/revisions/${revisionId}/mask`), { headers: auth })
    if (res.status !== 200) throw new Error(`mask of ${revisionId}: ${res.status} ${await res.text()}`)
    return maskPixels(new Uint8Array(await res.arrayBuffer()), photo.width, photo.height)
  }
  const projects = new Map<
    string,
    { id: string; revisionId: string; events: ReturnType<typeof projectEvents>; refinements: number }
  >()
  const closeProject = async (name: string) => {
    const p = projects.get(name)
    if (!p) return
    projects.delete(name)
    await p.events.close()
    await fetch(at(`/v1/projects/${p.id}`), { method: 'DELETE', headers: auth }).then((r) => r.body?.cancel())
  }
  return {
    name: 'api',
    async start(photo) {
      // The one project of the photo before (each pair has its own; the stack's state stays small).
      for (const name of [...projects.keys()]) await closeProject(name)
      const upload = await call<{ id: string; uploadUrl: string }>('POST', '/v1/uploads')
      const mime = photo.bytes[0] === 0x89 ? 'image/png' : 'image/jpeg'
      const put = await fetch(at(upload.uploadUrl), {
        method: 'PUT',
        headers: { ...auth, 'content-type': mime, 'content-length': String(photo.bytes.length) },
        body: photo.bytes,
      })
      if (put.status !== 204) throw new Error(`PUT upload: ${put.status} ${await put.text()}`)
      await call('POST', `/v1/uploads/${upload.id}/complete`)
      const t0 = performance.now()
      const res = await fetch(at('/v1/removals'), {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          prefer: 'wait=8',
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify({ uploadId: upload.id, options: START_OPTIONS }),
      })
      let job = (await res.json()) as { id: string; status: string }
      while (job.status === 'queued' || job.status === 'processing') {
        await new Promise((r) => setTimeout(r, 200))
        job = await call('GET', `/v1/jobs/${job.id}`)
      }
      if (job.status !== 'succeeded') throw new Error(`removal of ${photo.name}: ${JSON.stringify(job)}`)
      const ms = performance.now() - t0
      const project = await call<{ id: string; currentRevisionId: string }>('POST', '/v1/projects', {
        jobId: job.id,
        name: photo.name,
      })
      const events = projectEvents(at(`/v1/projects/${project.id}/events`), api.apiKey)
      projects.set(photo.name, { id: project.id, revisionId: project.currentRevisionId, events, refinements: 0 })
      return { mask: await mask(project.id, project.currentRevisionId, photo), ms }
    },
    async refine(photo, _base, clicks: RefinementPoint[]) {
      const p = projects.get(photo.name)
      if (!p) throw new Error(`${photo.name}: refine before start`)
      const t0 = performance.now()
      const created = await call<RefinementView>('POST', `/v1/projects/${p.id}/refinements`, {
        baseRevisionId: p.revisionId,
        points: clicks.slice(-1),
      })
      const path = `/v1/projects/${p.id}/refinements/${created.id}`
      const done = await p.events.ended(created.id, () => call<RefinementView>('GET', path))
      const ms = performance.now() - t0
      if (done.status !== 'succeeded' || !done.revisionId)
        throw new Error(`refinement ${done.status}: ${JSON.stringify(done.error)}`)
      p.revisionId = done.revisionId
      p.refinements++
      return { mask: await mask(p.id, done.revisionId, photo), ms }
    },
    info: () => ({ stack: 'bench/lib/stack.ts: inference server + wrangler dev', removal: START_OPTIONS }),
    async close() {
      for (const name of [...projects.keys()]) await closeProject(name).catch(() => {})
      await api.stop()
      await server.stop()
    },
  }
}
