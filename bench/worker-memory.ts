/**
 * `npm run bench -- memory`: how much memory the Worker needs for the largest things it handles
 * (issues 26.4 and 30.1). A Cloudflare isolate has 128 MB; a body read whole into memory twice
 * would not fit.
 *
 * Runs `wrangler dev` (workerd, as in production) against an inference server with the test-only
 * stub segmenter (the Worker's memory is what is measured, not the model's). Incoming bytes: one
 * image of just under 50 MB (SPEC.md's limit) each way a client can send it:
 *   upload     PUT /v1/uploads/{id}/content (the body streams to R2 through a digest)
 *   multipart  POST /v1/removals with the image as a multipart part (`Prefer: respond-async`)
 * and one catalog image from two references of about 24 MB each (`catalog`: POST
 * /v1/catalog-images, the client waiting; the references stream into R2 and on from there).
 * Outgoing bytes, the results the inference server streams back and the Worker stores in R2:
 *   removal-result-<n>mb  the job of a removal of an n MB noise PNG, followed to its end (its
 *                         cutout is a PNG larger than the source: noise does not compress)
 *   export-psd-<w>        a PSD export <w> pixels wide of a removal of examples/photo.jpg (7000:
 *                         about 49 MP, the largest under the 50 MP cap), followed to its end
 * Every 25 ms during each it samples the Worker isolate's memory through the DevTools protocol
 * (`Runtime.getHeapUsage` on `wrangler dev --inspector-port`: V8's heap, ArrayBuffer backing
 * stores and workerd's objects) and, from /proc, the resident memory, open file descriptors and
 * sockets of wrangler's workerd processes (bench/lib/workerd.ts). Reports the baseline (after a
 * forced GC) and the peak of each. Writes bench/results/worker-memory-<name>.json. Never an
 * assertion: it reports. `--only <substring>` runs the cases whose label contains it.
 *
 * Node 20 needs `--experimental-websocket` for the DevTools socket; the npm script passes it.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { MAX_IMAGE_BYTES } from '../src/contract/limits'
import { TERMINAL_STATUSES } from '../src/contract/stages'
import { startApi, startInference } from './lib/stack.js'
import { machineInfo, RESULTS_DIR, sleep } from './lib/util.js'
import { workerdUsage } from './lib/workerd.js'

const { values } = parseArgs({
  options: {
    name: { type: 'string', default: 'latest' },
    only: { type: 'string' },
    verbose: { type: 'boolean' },
  },
})

interface HeapUsage {
  usedSize: number
  backingStorageSize?: number
  embedderHeapUsedSize?: number
}

interface Sample {
  heapUsed: number
  rss: number
  fds: number
  sockets: number
}

/** What a measured piece of work ended with. */
interface Outcome {
  status: number | string
  detail?: string
}

/** A noise PNG of about `bytes` (noise does not compress, so size ≈ pixels × 3). */
async function largePng(bytes = MAX_IMAGE_BYTES * 0.97): Promise<Buffer> {
  const side = Math.floor(Math.sqrt(bytes / 3))
  const raw = Buffer.alloc(side * side * 3)
  let x = 0x9e3779b9
  for (let i = 0; i < raw.length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    raw[i] = x & 0xff
  }
  return sharp(raw, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer()
}

const MB = 1024 * 1024
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10
const TERMINAL: readonly string[] = TERMINAL_STATUSES
const FAST_CUTOUT = { quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' }

const inference = await startInference({ INFERENCE_SEGMENTER: 'stub' }, values.verbose)
// A 49 MP render takes tens of seconds on a busy machine, past the deadline of its 1 MP photo.
const api = await startApi(inference, { verbose: values.verbose, vars: { INFERENCE_DEADLINE_BASE_MS: '600000' } })
const wranglerPid = api.child.proc.pid as number
const auth = { authorization: `Bearer ${api.apiKey}` }

/** V8's heap plus ArrayBuffer backing stores and workerd's own objects held by the isolate. */
async function heapUsed(): Promise<number> {
  const usage = await api.devtools.send<HeapUsage>('Runtime.getHeapUsage')
  return usage.usedSize + (usage.backingStorageSize ?? 0) + (usage.embedderHeapUsedSize ?? 0)
}

function sample(heap: number): Sample {
  const { rss, fds, sockets } = workerdUsage(wranglerPid)
  return { heapUsed: heap, rss, fds, sockets }
}

const runs: Record<string, unknown>[] = []
const wanted = (label: string) => !values.only || label.includes(values.only)
const EXPORT_WIDTHS = [3000, 5000, 7000]

/** Runs `work` while sampling; the baseline is taken after a forced GC. Skipped unless it matches --only. */
async function measure(label: string, work: () => Promise<Outcome>, extra: Record<string, unknown> = {}) {
  if (!wanted(label)) return
  await Promise.race([api.devtools.send('HeapProfiler.collectGarbage'), sleep(2000)])
  await sleep(200)
  const baseline = sample(await heapUsed())
  const peak = { ...baseline }
  let running = true
  let lostSamples = 0
  const sampler = (async () => {
    while (running) {
      // A sample the inspector cannot answer (its connection is being re-made) is skipped, and counted.
      const heap = await heapUsed().catch(() => {
        lostSamples++
        return 0
      })
      const now = sample(heap)
      for (const k of Object.keys(peak) as (keyof Sample)[]) peak[k] = Math.max(peak[k], now[k])
      await sleep(25)
    }
  })()
  const started = performance.now()
  const outcome = await work()
  running = false
  await sampler
  const result = {
    label,
    ...extra,
    status: outcome.status,
    seconds: Math.round(performance.now() - started) / 1000,
    heapBaselineMB: mb(baseline.heapUsed),
    heapPeakMB: mb(peak.heapUsed),
    heapGrowthMB: mb(peak.heapUsed - baseline.heapUsed),
    rssBaselineMB: mb(baseline.rss),
    rssPeakMB: mb(peak.rss),
    rssGrowthMB: mb(peak.rss - baseline.rss),
    fdsBaseline: baseline.fds,
    fdsPeak: peak.fds,
    socketsBaseline: baseline.sockets,
    socketsPeak: peak.sockets,
    ...(lostSamples ? { heapSamplesLost: lostSamples } : {}),
  }
  if (outcome.detail) console.error(`${label}: ${outcome.status} ${outcome.detail.slice(0, 300)}`)
  console.log(result)
  runs.push(result)
}

/** A request's status, with its body when it failed. */
async function answered(response: Response): Promise<Outcome> {
  const body = await response.text()
  return { status: response.status, detail: response.status >= 300 ? body : undefined }
}

/** Polls `path` (a job, an export) until it ends; its final status, with its error when it did not succeed. */
async function followed(path: string): Promise<Outcome> {
  for (;;) {
    const res = await fetch(`${api.url}${path}`, { headers: auth })
    const body = (await res.json()) as { status: string; error?: unknown }
    if (TERMINAL.includes(body.status)) {
      return { status: body.status, detail: body.status === 'succeeded' ? undefined : JSON.stringify(body.error) }
    }
    await sleep(500)
  }
}

function removal(image: Buffer, name: string, prefer: string): Promise<Response> {
  const form = new FormData()
  form.set('image', new Blob([image], { type: name.endsWith('.png') ? 'image/png' : 'image/jpeg' }), name)
  form.set('options', JSON.stringify(FAST_CUTOUT))
  return fetch(`${api.url}/v1/removals`, {
    method: 'POST',
    headers: { ...auth, 'idempotency-key': crypto.randomUUID(), prefer },
    body: form,
  })
}

/** A removal of `image` followed to its end, its result stored: the job's id. */
async function removed(image: Buffer, name: string): Promise<string> {
  const { id } = (await (await removal(image, name, 'respond-async')).json()) as { id: string }
  const end = await followed(`/v1/jobs/${id}`)
  if (end.status !== 'succeeded') throw new Error(`removal of ${name}: ${end.status} ${end.detail}`)
  return id
}

try {
  const image = await largePng()
  console.log(`image: ${mb(image.length)} MB PNG (limit ${mb(MAX_IMAGE_BYTES)} MB)`)

  await measure('upload', async () => {
    const reserved = await fetch(`${api.url}/v1/uploads`, { method: 'POST', headers: auth })
    const { id } = (await reserved.json()) as { id: string }
    return answered(
      await fetch(`${api.url}/v1/uploads/${id}/content`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'image/png' },
        body: image,
      }),
    )
  })

  // Before any removal: a job runs on in the Worker's Durable Object after its 202 and would
  // share the isolate (and its CPU) with this request.
  const reference = await largePng(24 * MB)
  console.log(`catalog reference: ${mb(reference.length)} MB PNG, sent twice`)
  await measure('catalog', async () => {
    const form = new FormData()
    for (const name of ['front.png', 'back.png']) {
      form.append('references', new Blob([reference], { type: 'image/png' }), name)
    }
    form.set('width', '512')
    form.set('height', '512')
    return answered(await fetch(`${api.url}/v1/catalog-images`, { method: 'POST', headers: auth, body: form }))
  })

  let multipartJob: string | undefined
  await measure('multipart', async () => {
    const response = await removal(image, 'large.png', 'respond-async')
    const body = await response.text()
    if (response.status === 202) multipartJob = (JSON.parse(body) as { id: string }).id
    return { status: response.status, detail: response.status >= 300 ? body : undefined }
  })
  // The rest of that job (its cutout made and stored) is the largest removal result.
  if (multipartJob) {
    await measure(`removal-result-${Math.round(mb(image.length))}mb`, () => followed(`/v1/jobs/${multipartJob}`), {
      sourceBytes: image.length,
    })
  }
  const smaller = await largePng(12 * MB)
  await measure(
    `removal-result-${Math.round(mb(smaller.length))}mb`,
    async () => {
      const response = await removal(smaller, 'smaller.png', 'respond-async')
      const { id } = (await response.json()) as { id: string }
      return followed(`/v1/jobs/${id}`)
    },
    { sourceBytes: smaller.length },
  )

  // Exports: a project from a removal of the sample photo, rendered ever larger.
  if (EXPORT_WIDTHS.some((width) => wanted(`export-psd-${width}`))) {
    const jobId = await removed(readFileSync(new URL('../examples/photo.jpg', import.meta.url)), 'photo.jpg')
    const project = (await (
      await fetch(`${api.url}/v1/projects`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ jobId }),
      })
    ).json()) as { id: string }
    for (const width of EXPORT_WIDTHS) {
      await measure(
        `export-psd-${width}`,
        async () => {
          const response = await fetch(`${api.url}/v1/projects/${project.id}/exports`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', prefer: 'wait=8' },
            body: JSON.stringify({ format: 'psd', recipe: { version: 1, width } }),
          })
          if (response.status !== 201 && response.status !== 202) return answered(response)
          const { id } = (await response.json()) as { id: string }
          return followed(`/v1/projects/${project.id}/exports/${id}`)
        },
        { width },
      )
    }
  }

  const out = {
    name: values.name,
    machine: machineInfo(),
    imageBytes: image.length,
    isolateLimitMB: 128,
    catalogReferenceBytes: reference.length,
    runs,
    note:
      'heap = the Worker isolate’s V8 heap + ArrayBuffer backing stores + embedder objects (Runtime.getHeapUsage); rss, fds and sockets = ' +
      'both workerd processes of wrangler dev (its proxy, which serves the port, and the runtime with all isolates, Durable Objects and ' +
      'the local R2/D1 simulators), so an upper bound for one isolate. Network inspection off, as npm start runs it (scripts/lib/inspector-guard.ts).',
  }
  const file = `${RESULTS_DIR}worker-memory-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`)
  console.log(`wrote ${file}`)
} finally {
  await api.stop()
  await inference.stop()
}
