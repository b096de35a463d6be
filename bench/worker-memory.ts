/**
 * `npm run bench:memory`: how much memory the Worker needs for a 50 MB image (issue 26.4). A
 * Cloudflare isolate has 128 MB; a body read whole into memory twice would not fit.
 *
 * Runs `wrangler dev` (workerd, as in production) against an inference server with the test-only
 * stub segmenter (the Worker's memory is what is measured, not the model's), then sends one image
 * of just under 50 MB (SPEC.md's limit) each way a client can:
 *   upload     PUT /v1/uploads/{id}/content (the body streams to R2 through a digest)
 *   multipart  POST /v1/removals with the image as a multipart part (`Prefer: respond-async`)
 * and one catalog image from two references of about 24 MB each (`catalog`: POST
 * /v1/catalog-images, the client waiting; the references stream into R2 and on from there),
 * and samples, every 25 ms during each request, the Worker isolate's memory through the DevTools
 * protocol (`Runtime.getHeapUsage` on `wrangler dev --inspector-port`: V8's heap, ArrayBuffer backing
 * stores and workerd's objects) and the workerd process's
 * resident memory from /proc. Reports the baseline after a forced GC, the peak, and the growth.
 * Writes bench/results/worker-memory-<name>.json. Never an assertion: it reports.
 *
 * Node 20 needs `--experimental-websocket` for the DevTools socket; the npm script passes it.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { MAX_IMAGE_BYTES } from '../src/contract/limits'
import { startApi, startInference } from './lib/stack.js'
import { machineInfo, RESULTS_DIR, sleep } from './lib/util.js'

const { values } = parseArgs({ options: { name: { type: 'string', default: 'latest' }, verbose: { type: 'boolean' } } })

interface HeapUsage {
  usedSize: number
  backingStorageSize?: number
  embedderHeapUsedSize?: number
}

interface Sample {
  heapUsed: number
  rss: number
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

/** The DevTools session of the Worker under `wrangler dev`. */
async function devtools(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl: string }[]
  if (!targets.length) throw new Error('wrangler dev offered no DevTools target')
  // wrangler's inspector proxy admits only DevTools' own origins and loopback (the `Origin` header;
  // Node's WebSocket takes headers as an extension of the standard constructor).
  const init = { headers: { origin: 'http://127.0.0.1' } } as unknown as string[]
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl, init)
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true })
    socket.addEventListener('error', reject, { once: true })
  })
  let next = 0
  const pending = new Map<number, (result: unknown) => void>()
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: unknown }
    if (process.env.DEBUG_DEVTOOLS) console.log('devtools <-', String(event.data).slice(0, 200))
    if (message.id !== undefined) pending.get(message.id)?.(message.result)
  })
  const send = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve) => {
      const id = ++next
      pending.set(id, resolve as (result: unknown) => void)
      socket.send(JSON.stringify({ id, method, params }))
    })
  return {
    /** V8's heap plus ArrayBuffer backing stores and workerd's own objects held by the isolate. */
    heapUsed: async () => {
      const usage = await send<HeapUsage>('Runtime.getHeapUsage')
      return usage.usedSize + (usage.backingStorageSize ?? 0) + (usage.embedderHeapUsedSize ?? 0)
    },
    collectGarbage: () => send('HeapProfiler.collectGarbage'),
    close: () => socket.close(),
  }
}

/** Every process under `pid` (wrangler starts workerd as a child). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {}
  }
  const all: number[] = []
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c)
      walk(c)
    }
  }
  walk(pid)
  return all
}

/** Resident memory of the workerd processes wrangler runs (one, as of wrangler 4). */
function workerdRss(root: number): number {
  let total = 0
  for (const pid of descendants(root)) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('workerd')) continue
      const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)
      if (line) total += Number(line[1]) * 1024
    } catch {}
  }
  return total
}

const MB = 1024 * 1024
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10

const inference = await startInference({ INFERENCE_SEGMENTER: 'stub' }, values.verbose)
const api = await startApi(inference, { verbose: values.verbose })
const tools = await devtools(api.inspectorPort)
const wranglerPid = api.child.proc.pid as number
const auth = { authorization: `Bearer ${api.apiKey}` }

/** Runs `request` while sampling memory; the baseline is taken after a forced GC. */
async function measure(label: string, request: () => Promise<Response>) {
  await Promise.race([tools.collectGarbage(), sleep(2000)])
  await sleep(200)
  const baseline: Sample = { heapUsed: await tools.heapUsed(), rss: workerdRss(wranglerPid) }
  const peak: Sample = { ...baseline }
  let running = true
  const sampler = (async () => {
    while (running) {
      peak.heapUsed = Math.max(peak.heapUsed, await tools.heapUsed())
      peak.rss = Math.max(peak.rss, workerdRss(wranglerPid))
      await sleep(25)
    }
  })()
  const started = performance.now()
  const response = await request()
  const body = await response.text()
  running = false
  await sampler
  const result = {
    label,
    status: response.status,
    seconds: Math.round(performance.now() - started) / 1000,
    heapBaselineMB: mb(baseline.heapUsed),
    heapPeakMB: mb(peak.heapUsed),
    heapGrowthMB: mb(peak.heapUsed - baseline.heapUsed),
    rssBaselineMB: mb(baseline.rss),
    rssPeakMB: mb(peak.rss),
    rssGrowthMB: mb(peak.rss - baseline.rss),
  }
  if (response.status >= 300) console.error(`${label}: ${response.status} ${body.slice(0, 300)}`)
  console.log(result)
  return result
}

try {
  const image = await largePng()
  console.log(`image: ${mb(image.length)} MB PNG (limit ${mb(MAX_IMAGE_BYTES)} MB)`)

  const upload = await measure('upload', async () => {
    const reserved = await fetch(`${api.url}/v1/uploads`, { method: 'POST', headers: auth })
    const { id } = (await reserved.json()) as { id: string }
    return fetch(`${api.url}/v1/uploads/${id}/content`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'image/png' },
      body: image,
    })
  })

  // Before the removal: its job runs on in the Worker's Durable Object after the 202 and would
  // share the isolate (and its CPU) with this request.
  const reference = await largePng(24 * MB)
  console.log(`catalog reference: ${mb(reference.length)} MB PNG, sent twice`)
  const catalog = await measure('catalog', () => {
    const form = new FormData()
    for (const name of ['front.png', 'back.png']) {
      form.append('references', new Blob([reference], { type: 'image/png' }), name)
    }
    form.set('width', '512')
    form.set('height', '512')
    return fetch(`${api.url}/v1/catalog-images`, { method: 'POST', headers: auth, body: form })
  })

  const multipart = await measure('multipart', () => {
    const form = new FormData()
    form.set('image', new Blob([image], { type: 'image/png' }), 'large.png')
    form.set('options', JSON.stringify({ quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' }))
    return fetch(`${api.url}/v1/removals`, {
      method: 'POST',
      headers: { ...auth, 'idempotency-key': crypto.randomUUID(), prefer: 'respond-async' },
      body: form,
    })
  })

  const out = {
    name: values.name,
    machine: machineInfo(),
    imageBytes: image.length,
    isolateLimitMB: 128,
    catalogReferenceBytes: reference.length,
    runs: [upload, catalog, multipart],
    note:
      'heap = the Worker isolate’s V8 heap + ArrayBuffer backing stores + embedder objects (Runtime.getHeapUsage); rss = the whole workerd process ' +
      '(all isolates, Durable Objects, local R2/D1 simulators), so an upper bound for one isolate.',
  }
  const file = `${RESULTS_DIR}worker-memory-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`)
  console.log(`wrote ${file}`)
} finally {
  tools.close()
  await api.stop()
  await inference.stop()
}
