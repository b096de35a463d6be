/** The four things the benchmark times, each as "process one image once". */
import { pathToFileURL } from 'node:url'
import { signRequest } from '../../inference-server/src/auth.js'
import { loadModel } from '../../inference-server/src/segmentation/model.js'
import { imgly, imglyDist, ort } from './deps.js'
import type { BenchImage } from './images.js'
import type { ApiStack, InferenceServer } from './stack.js'

/** (a) The floor: one bare `session.run` at 1024² with the server's own session options. */
export async function createFloor(threads = 2) {
  const { session, inputName, outputName } = await loadModel({ threads })
  const data = new Float32Array(3 * 1024 * 1024)
  for (let i = 0; i < data.length; i++) data[i] = Math.random() - 0.5
  const input = new ort.Tensor('float32', data, [1, 3, 1024, 1024])
  return {
    async run() {
      const out = await session.run({ [inputName]: input }, [outputName])
      out[outputName].dispose?.()
    },
    close: () => session.release(),
  }
}

export interface ServerCall {
  ms: number
  bytes: number
  timing: Record<string, number>
}

/** (b) The inference server's own endpoint, signed like the Worker signs it. */
export async function callServer(server: InferenceServer, image: BenchImage, query: string): Promise<ServerCall> {
  const path = `/v1/remove?${query}`
  const t0 = performance.now()
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: await signRequest(server.signingKey, { method: 'POST', path, body: image.bytes }),
      'content-type': 'application/octet-stream',
    },
    body: image.bytes,
  })
  const body = new Uint8Array(await res.arrayBuffer())
  const ms = performance.now() - t0
  if (res.status !== 200)
    throw new Error(`inference ${path} on ${image.name}: ${res.status} ${new TextDecoder().decode(body)}`)
  const timing: Record<string, number> = {}
  for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
    const m = /^\s*(\w+);dur=([\d.]+)/.exec(part)
    if (m) timing[m[1]] = Number(m[2])
  }
  return { ms, bytes: body.length, timing }
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
  const job = (await removal.json()) as { status: string; result?: { url: string } | null }
  if (removal.status !== 200 || job.status !== 'succeeded' || !job.result) {
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
