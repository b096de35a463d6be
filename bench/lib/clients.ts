/** The four things the benchmark times, each as "process one image once". */
import { pathToFileURL } from 'node:url'
import { imagePart, optionsPart, signedRequest } from '../../inference-server/src/auth.js'
import { loadModel } from '../../inference-server/src/segmentation/model.js'
import { FRAMES_CONTENT_TYPE, type Notice, readFrames } from '../../src/contract/frames.js'
import type { RemoveRequest } from '../../src/contract/options.js'
import { imgly, imglyDist, ort } from './deps.js'
import type { BenchImage } from './images.js'
import type { ApiStack, InferenceServer } from './stack.js'

/**
 * (a) The floor: one bare `session.run` at the model's native size (1024² for the built-in ISNet)
 * with the server's own session options, on SEGMENTATION_MODEL when it is set.
 */
export async function createFloor(threads = 2) {
  const {
    session,
    inputName,
    outputName,
    input: size,
  } = await loadModel({
    threads,
    modelPath: process.env.SEGMENTATION_MODEL || undefined,
    profile: process.env.SEGMENTATION_PROFILE || undefined,
  })
  const { width, height } = size.native
  const data = new Float32Array(3 * width * height)
  for (let i = 0; i < data.length; i++) data[i] = Math.random() - 0.5
  const input = new ort.Tensor('float32', data, [1, 3, height, width])
  return {
    async run() {
      const out = await session.run({ [inputName]: input }, [outputName])
      out[outputName].dispose?.()
    },
    close: () => session.release(),
  }
}

export interface ServerCall {
  /** From signing the request to the `done` frame. */
  ms: number
  /** From signing the request to the first `stage` frame (upload, wait for a slot, decode). */
  firstStageMs: number
  /** The PNG's size, from the `result` output frame. */
  bytes: number
  /** The server's own per-step milliseconds, from `done`. */
  timing: Record<string, number>
  warnings: Notice[]
}

/** The options of a `/v1/remove` request (`src/contract/options.ts`). */
export type ServerOptions = RemoveRequest

/**
 * (b) The inference server's own endpoint, signed like the Worker signs it (an `options` part and
 * an `image` part): reads the frames, the PNG out of the `result` output, and times to `done`.
 */
export async function callServer(
  server: InferenceServer,
  image: BenchImage,
  options: ServerOptions,
): Promise<ServerCall> {
  const path = '/v1/remove'
  const what = `inference ${path} ${JSON.stringify(options)} on ${image.name}`
  // Signing (hashing the image) is counted, as the edge pays it on every call too.
  const t0 = performance.now()
  const { headers, body } = await signedRequest(server.signingKey, 'POST', path, [
    optionsPart(options),
    imagePart(image.bytes),
  ])
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body })
  if (res.status !== 200 || res.headers.get('content-type') !== FRAMES_CONTENT_TYPE || !res.body) {
    throw new Error(`${what}: ${res.status} ${await res.text()}`)
  }
  let firstStageMs: number | undefined
  let bytes: number | undefined
  for await (const frame of readFrames(res.body)) {
    if (frame.type === 'stage') firstStageMs ??= performance.now() - t0
    else if (frame.type === 'output') {
      const png = new Uint8Array(await new Response(frame.body).arrayBuffer())
      if (frame.name === 'result') bytes = png.byteLength
    } else if (frame.type === 'error') {
      throw new Error(`${what}: error frame ${frame.code}: ${frame.message}`)
    } else {
      const ms = performance.now() - t0
      if (bytes === undefined) throw new Error(`${what}: done without a result output`)
      return { ms, firstStageMs: firstStageMs ?? ms, bytes, timing: frame.timings ?? {}, warnings: frame.warnings }
    }
  }
  throw new Error(`${what}: the answer ended without done`)
}

export interface ApiCall {
  upload: number
  removal: number
  download: number
  total: number
  bytes: number
}

/** (c) The full API path through `wrangler dev`: upload, removal with `Prefer: wait=8`, result download. */
export async function callApi(api: ApiStack, image: BenchImage, options: unknown): Promise<ApiCall> {
  const auth = { authorization: `Bearer ${api.apiKey}` }
  const at = (p: string) => new URL(p, api.url).toString()
  const t0 = performance.now()
  const created = await fetch(at('/v1/uploads'), { method: 'POST', headers: auth })
  if (created.status !== 201 && created.status !== 200)
    throw new Error(`create upload: ${created.status} ${await created.text()}`)
  const { id, uploadUrl } = (await created.json()) as { id: string; uploadUrl: string }
  const put = await fetch(at(uploadUrl), {
    method: 'PUT',
    headers: { ...auth, 'content-type': image.mimeType, 'content-length': String(image.bytes.length) },
    body: image.bytes,
  })
  if (put.status !== 204) throw new Error(`PUT upload: ${put.status} ${await put.text()}`)
  const done = await fetch(at(`/v1/uploads/${id}/complete`), { method: 'POST', headers: auth })
  if (done.status !== 200) throw new Error(`complete upload: ${done.status} ${await done.text()}`)
  await done.arrayBuffer()
  const t1 = performance.now()
  const removal = await fetch(at('/v1/removals'), {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', prefer: 'wait=8', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ uploadId: id, options }),
  })
  let job = (await removal.json()) as { id: string; status: string; result?: { url: string } | null }
  // On a loaded machine a removal can outlast wait=8 (202): poll the job until it ends.
  while (removal.status === 202 && (job.status === 'queued' || job.status === 'processing')) {
    await new Promise((r) => setTimeout(r, 100))
    job = (await (await fetch(at(`/v1/jobs/${job.id}`), { headers: auth })).json()) as typeof job
  }
  if ((removal.status !== 200 && removal.status !== 202) || job.status !== 'succeeded' || !job.result) {
    throw new Error(`removal of ${image.name}: ${removal.status} ${JSON.stringify(job)}`)
  }
  const t2 = performance.now()
  const result = await fetch(at(job.result.url), { headers: auth })
  const png = new Uint8Array(await result.arrayBuffer())
  if (result.status !== 200) throw new Error(`result download: ${result.status}`)
  const t3 = performance.now()
  return { upload: t1 - t0, removal: t2 - t1, download: t3 - t2, total: t3 - t0, bytes: png.length }
}

/** (d) The reference: `@imgly/background-removal-node`'s own removeBackground (its session is memoised). */
export function createReference() {
  const publicPath = pathToFileURL(imglyDist()).href
  return async (image: BenchImage): Promise<number> => {
    const blob = await imgly.removeBackground(new Blob([image.bytes], { type: image.mimeType }), {
      publicPath,
      model: 'medium',
      output: { format: 'image/png' },
    })
    return (await blob.arrayBuffer()).byteLength
  }
}
