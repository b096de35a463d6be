/**
 * The catalog benchmark (part of `npm run bench -- all`, or alone: `npm run bench -- catalog`). Writes
 * bench/results/catalog-<name>.json. Never an assertion: it reports.
 * (a) time: a catalog image (POST /v1/catalog on the inference server, signed, to its `done`
 *     frame) of a ~1 MP reference at 1024², against one bare model run (the floor of bench/all.ts)
 *     measured in the same run, interleaved round by round; DESIGN.md §4 asks ≤ 1.5 × one model
 *     run per reference. References: coffee.png enlarged to 1224×816 (PNG) and the camera-like
 *     synthetic 1 MP JPEG of bench/all.ts; and a `views` sheet of both (ratio per reference).
 * (b) super-resolution: a 200 px reference into 2048² with ESRGAN and with lanczos3 only (time,
 *     in-process generators); and what the model adds over lanczos3 on a known truth: each
 *     fixture photo reduced 2× and 3× (lanczos3) and brought back by ESRGAN slim x2 / x3 and by
 *     lanczos3, scored against the photo (PSNR in dB, and sharpness: mean Sobel gradient as a
 *     share of the truth's).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { imagePart, optionsPart, signedRequest } from '../inference-server/src/auth.js'
import { createCpuGenerator } from '../inference-server/src/catalog/cpu.js'
import { createEsrganUpscaler, ESRGAN_SCALES } from '../inference-server/src/catalog/upscale.js'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { CatalogOptionsSchema, type CatalogRequest } from '../src/contract/catalog.js'
import { FRAMES_CONTENT_TYPE, readFrames } from '../src/contract/frames.js'
import { createFloor } from './lib/clients.js'
import { sharp } from './lib/deps.js'
import { type BenchImage, FIXTURE_PHOTOS, fixturePhoto, syntheticJpeg } from './lib/images.js'
import { startInference, type InferenceServer } from './lib/stack.js'
import { machineInfo, median, RESULTS_DIR, round, stats } from './lib/util.js'

type Log = (message: string) => void

interface CatalogCall {
  ms: number
  timings: Record<string, number>
}

/** POST /v1/catalog with `images` as the references; the time from signing to `done`. */
async function callCatalog(
  server: InferenceServer,
  images: BenchImage[],
  options: Partial<CatalogRequest>,
): Promise<CatalogCall> {
  const path = '/v1/catalog'
  const t0 = performance.now()
  const { headers, body } = await signedRequest(server.signingKey, 'POST', path, [
    optionsPart({ seed: 1, references: images.length, ...options }),
    ...images.map((image, i) => imagePart(image.bytes, `reference-${i}`)),
  ])
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body })
  if (res.headers.get('content-type') !== FRAMES_CONTENT_TYPE || !res.body) {
    throw new Error(`catalog: ${res.status} ${await res.text()}`)
  }
  for await (const frame of readFrames(res.body)) {
    if (frame.type === 'output') await new Response(frame.body).arrayBuffer()
    else if (frame.type === 'error') throw new Error(`catalog: ${frame.code}: ${frame.message}`)
    else if (frame.type === 'done') return { ms: performance.now() - t0, timings: frame.timings ?? {} }
  }
  throw new Error('catalog: the answer ended without done')
}

/** coffee.png enlarged to 1224×816, a ~1 MP product photo. */
async function coffee1mp(): Promise<BenchImage> {
  const base = await fixturePhoto('coffee.png')
  const bytes = await sharp(base.bytes).resize(1224, 816, { kernel: 'lanczos3' }).png().toBuffer()
  return { name: 'coffee-1mp.png', bytes: new Uint8Array(bytes), mimeType: 'image/png', width: 1224, height: 816 }
}

const medianTimings = (calls: CatalogCall[]) =>
  Object.fromEntries(
    Object.keys(calls[0].timings).map((k) => [k, round(median(calls.map((c) => c.timings[k] ?? 0)), 1)]),
  )

/** (a) Catalog images against the floor, interleaved. */
async function timeAgainstFloor(rounds: number, log: Log) {
  const product = await coffee1mp()
  const camera = await syntheticJpeg('1mp')
  const cases = [
    { name: 'hero coffee-1mp.png', images: [product], options: {} },
    { name: 'hero synthetic-1mp.jpg', images: [camera], options: {} },
    { name: 'views coffee-1mp.png + synthetic-1mp.jpg', images: [product, camera], options: { layout: 'views' } },
  ] as const
  const server = await startInference()
  const floor = await createFloor()
  const floorTimes: number[] = []
  const calls = cases.map(() => [] as CatalogCall[])
  try {
    log('catalog warm-up…')
    await floor.run()
    for (const c of cases) await callCatalog(server, [...c.images], c.options)
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now()
      await floor.run()
      floorTimes.push(performance.now() - t0)
      for (const [i, c] of cases.entries()) calls[i].push(await callCatalog(server, [...c.images], c.options))
      log(
        `catalog round ${r + 1}/${rounds}: floor ${floorTimes[r].toFixed(0)} ms, ${calls.map((cs) => cs[r].ms.toFixed(0)).join(' / ')} ms`,
      )
    }
  } finally {
    await floor.close()
    await server.stop()
  }
  const f = median(floorTimes)
  return {
    floor: stats(floorTimes),
    cases: cases.map((c, i) => {
      const m = median(calls[i].map((x) => x.ms))
      return {
        name: c.name,
        references: c.images.length,
        total: stats(calls[i].map((x) => x.ms)),
        steps: medianTimings(calls[i]),
        ratioToFloor: round(m / f, 2),
        ratioToFloorPerReference: round(m / f / c.images.length, 2),
        ok: m / f / c.images.length <= 1.5,
      }
    }),
  }
}

/** Mean Sobel gradient magnitude of an RGB image's luma. */
function sharpness(rgb: Uint8Array, width: number, height: number): number {
  const y = new Float32Array(width * height)
  for (let k = 0; k < y.length; k++) y[k] = 0.2126 * rgb[k * 3] + 0.7152 * rgb[k * 3 + 1] + 0.0722 * rgb[k * 3 + 2]
  let sum = 0
  for (let r = 1; r < height - 1; r++)
    for (let c = 1; c < width - 1; c++) {
      const at = (dr: number, dc: number) => y[(r + dr) * width + c + dc]
      const gx = at(-1, 1) + 2 * at(0, 1) + at(1, 1) - at(-1, -1) - 2 * at(0, -1) - at(1, -1)
      const gy = at(1, -1) + 2 * at(1, 0) + at(1, 1) - at(-1, -1) - 2 * at(-1, 0) - at(-1, 1)
      sum += Math.hypot(gx, gy)
    }
  return sum / ((width - 2) * (height - 2))
}

function psnr(a: Uint8Array, b: Uint8Array): number {
  let se = 0
  for (let i = 0; i < a.length; i++) se += (a[i] - b[i]) ** 2
  return 10 * Math.log10((255 * 255) / (se / a.length))
}

const rawRgb = async (input: Uint8Array, resize?: [number, number]) => {
  let pipeline = sharp(input).removeAlpha()
  if (resize) pipeline = pipeline.resize(resize[0], resize[1], { fit: 'fill', kernel: 'lanczos3' })
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true })
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height }
}

/** (b) ESRGAN against lanczos3: on known truths, and in a whole catalog image. */
async function superResolution(log: Log) {
  const upscaler = createEsrganUpscaler()
  const truths = []
  try {
    for (const name of FIXTURE_PHOTOS) {
      const photo = await fixturePhoto(name)
      for (const factor of ESRGAN_SCALES) {
        // Sides that divide by the factor, so the round trip lands on the truth's grid.
        const w = photo.width - (photo.width % factor)
        const h = photo.height - (photo.height % factor)
        const truth = await rawRgb(photo.bytes, [w, h])
        const small = await sharp(truth.data, { raw: { width: w, height: h, channels: 3 } })
          .resize(w / factor, h / factor, { kernel: 'lanczos3' })
          .raw()
          .toBuffer()
        const t0 = performance.now()
        const input = { data: new Uint8Array(small), width: w / factor, height: h / factor, channels: 3 as const }
        const up = await upscaler.upscale(input, factor)
        const esrganMs = performance.now() - t0
        const t1 = performance.now()
        const lanczos = await sharp(small, { raw: { width: w / factor, height: h / factor, channels: 3 } })
          .resize(w, h, { kernel: 'lanczos3' })
          .raw()
          .toBuffer()
        const lanczosMs = performance.now() - t1
        const truthSharpness = sharpness(truth.data, w, h)
        const score = (rgb: Uint8Array, ms: number) => ({
          ms: round(ms, 1),
          psnr: round(psnr(rgb, truth.data), 2),
          sharpness: round(sharpness(rgb, w, h) / truthSharpness, 3),
        })
        const row = {
          name,
          factor,
          truth: `${w}×${h}`,
          esrgan: score(up.data, esrganMs),
          lanczos3: score(new Uint8Array(lanczos), lanczosMs),
        }
        log(
          `super-resolution ${name} ${factor}×: ${JSON.stringify(row.esrgan)} vs lanczos3 ${JSON.stringify(row.lanczos3)}`,
        )
        truths.push(row)
      }
    }
  } finally {
    await upscaler.close()
  }

  // A whole catalog image of a 200 px reference into 2048², with and without the model.
  const small = new Uint8Array(
    await sharp((await fixturePhoto('coffee.png')).bytes)
      .resize(200, 200, { fit: 'inside' })
      .png()
      .toBuffer(),
  )
  const segmenter = await createSegmenter()
  const withModel = createCpuGenerator()
  const plain = createCpuGenerator({ upscaler: null })
  const options = CatalogOptionsSchema.parse({ seed: 1, width: 2048, height: 2048 })
  const refs = [{ name: 'reference-0', bytes: small }]
  const context = { segmenter, onStage: () => {} }
  const runs: Record<string, Array<{ ms: number; timings: Record<string, number> }>> = { esrgan: [], lanczos3: [] }
  try {
    await withModel.generate(refs, options, context)
    for (let r = 0; r < 3; r++) {
      for (const [key, generator] of [
        ['esrgan', withModel],
        ['lanczos3', plain],
      ] as const) {
        const t0 = performance.now()
        const result = await generator.generate(refs, options, context)
        runs[key].push({ ms: performance.now() - t0, timings: result.timings })
      }
    }
  } finally {
    await withModel.close()
    await segmenter.close()
  }
  const summary = (key: string) => ({ total: stats(runs[key].map((r) => r.ms)), steps: medianTimings(runs[key]) })
  return {
    catalog200pxInto2048: {
      reference: '200×133 (coffee.png reduced)',
      esrgan: summary('esrgan'),
      lanczos3: summary('lanczos3'),
    },
    knownTruth: truths,
  }
}

export async function runCatalogBench({ rounds = 5, log }: { rounds?: number; log: Log }) {
  const time = await timeAgainstFloor(rounds, log)
  const sr = await superResolution(log)
  return {
    method: {
      floor: 'bare session.run at [1,3,1024,1024], fp16 ISNet, 2 intra-op threads (bench/run.ts)',
      catalog:
        'POST /v1/catalog (seed 1, soft shadow, #FFFFFF, 1024²) on the inference server, signed, from signing to the done frame; rounds interleaved with the floor',
      superResolution:
        'in-process generators (ESRGAN slim / lanczos3 only); known truth: each fixture reduced 2× and 3× with lanczos3, enlarged back by the model and by lanczos3',
    },
    ...time,
    superResolution: sr,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { name: { type: 'string', default: 'latest' }, rounds: { type: 'string', default: '5' } },
  })
  const log: Log = (m) => process.stderr.write(`${m}\n`)
  const result = await runCatalogBench({ rounds: Number(values.rounds), log })
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}catalog-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  log(`${JSON.stringify(result.cases, null, 2)}\nwrote ${file}`)
}
