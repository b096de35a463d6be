/**
 * `npm run bench -- all`: the run of record. First, how close the whole removal path gets to the
 * model's own time, and how it compares with @imgly/background-removal-node on the same images:
 *   (a) floor      one bare ISNet `session.run` at 1024² (the server's session options)
 *   (b) server     the inference server's POST /v1/remove, signed, to its `done` frame (mask and cutout)
 *   (c) api        upload → POST /v1/removals (Prefer: wait=8) → result download, via `wrangler dev`
 *   (d) reference  `removeBackground` of @imgly/background-removal-node (model "medium", PNG)
 * Repetitions are interleaved (floor, server, api, reference per image per round) so load from
 * other processes on a shared machine falls on all of them alike; only one thing runs at a time.
 * Writes bench/results/<name>.json and <name>.svg. Never an assertion: it reports.
 *
 * Then the ground-truth quality benchmark (bench/quality-gt.ts: every level on the real photos of
 * ../shared/gt against their true alpha) writes bench/results/quality-gt-<name>.json and
 * docs/quality/gt-sad.svg, the synthetic quality benchmark (bench/quality-synthetic.ts) writes bench/results/quality-synthetic-<name>.json, the
 * refinement benchmark (bench/refinement.ts) bench/results/refinement-<name>.json, the catalog
 * benchmark (bench/catalog.ts) bench/results/catalog-<name>.json, the try-on benchmark
 * (bench/tryon.ts) bench/results/tryon-<name>.json, and the clicks benchmark (bench/clicks.ts:
 * simulated clicks on ../shared/gt's photos, through the API, or in process with --no-api)
 * bench/results/clicks-<name>.json.
 *
 * Quality levels (issue 14): each level through the server and the API at 1 MP (during the main
 * run), then the input-size sweep and the web runtime (bench/levels.ts) into
 * bench/results/levels-<name>.json with the targets, and the throughput of one 2-thread
 * session against two 1-thread sessions (bench/throughput.ts) into throughput-<name>.json.
 *
 * Flags: --name <name> (default "latest"), --rounds <n> (scales repetitions), --no-api,
 * --no-reference, --no-gt, --no-quality, --no-refinement, --no-catalog, --no-tryon, --no-clicks,
 * --no-levels, --no-throughput, --only <substring of image names>, --verbose (child output). Each
 * part also runs alone through the door (bench/run.ts: `npm run bench -- quality-gt`, …).
 *
 * Another model (issue 25; docs/models.md): SEGMENTATION_MODEL / SEGMENTATION_PROFILE (and the
 * per-level SEGMENTATION_MODEL_<LEVEL>) reach the inference server it starts, the floor and the
 * ground-truth benchmark, e.g. `SEGMENTATION_MODEL=BiRefNet-general-epoch_244.onnx
 * SEGMENTATION_PROFILE=birefnet-general npm run bench -- quality-gt --no-chart --name birefnet`
 * (the ground-truth benchmark alone). The other in-process benchmarks (levels, synthetic quality,
 * catalog) measure the built-in ISNet.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import {
  callApi,
  callServer,
  createFloor,
  createReference,
  type ApiCall,
  type ServerCall,
  type ServerOptions,
} from './lib/clients.js'
import { fixturePhoto, FIXTURE_PHOTOS, syntheticJpeg, type BenchImage } from './lib/images.js'
import { startApi, startInference, type ApiStack } from './lib/stack.js'
import { runCatalogBench } from './catalog.js'
import { runClicksBench } from './clicks.js'
import { formatTable } from './lib/click-protocol.js'
import { ratioChart } from './lib/chart.js'
import { FAST_DEFAULTS } from '../inference-server/src/levels/fast.js'
import { runLevelsBench, timeLevelsThroughApi } from './levels.js'
import { writeGtReport } from './quality-gt.js'
import { runQualityBench } from './quality-synthetic.js'
import { runThroughputBench } from './throughput.js'
import { runRefinementBench } from './refinement.js'
import { runTryOnBench } from './tryon.js'
import { machineInfo, median, RESULTS_DIR, rssOf, round, stats } from './lib/util.js'

const { values: flags } = parseArgs({
  options: {
    name: { type: 'string', default: 'latest' },
    rounds: { type: 'string', default: '1' },
    'no-api': { type: 'boolean', default: false },
    'no-reference': { type: 'boolean', default: false },
    'no-quality': { type: 'boolean', default: false },
    'no-gt': { type: 'boolean', default: false },
    'no-refinement': { type: 'boolean', default: false },
    'no-tryon': { type: 'boolean', default: false },
    'no-catalog': { type: 'boolean', default: false },
    'no-clicks': { type: 'boolean', default: false },
    'no-levels': { type: 'boolean', default: false },
    'no-throughput': { type: 'boolean', default: false },
    only: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
})
const scale = Number(flags.rounds)
const log = (msg: string) => process.stderr.write(`${msg}\n`)

const CUTOUT_OPTIONS: ServerOptions = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' }
const MASK_OPTIONS: ServerOptions = { ...CUTOUT_OPTIONS, output: 'mask' }
const API_OPTIONS = CUTOUT_OPTIONS

interface Samples {
  image: BenchImage
  reps: number
  mask: ServerCall[]
  cutout: ServerCall[]
  api: ApiCall[]
  reference: number[]
}

const started = Date.now()
const machine = machineInfo()
log(`machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGB} GB, node ${machine.node}`)

const images: BenchImage[] = []
for (const name of FIXTURE_PHOTOS) images.push(await fixturePhoto(name))
for (const label of ['1mp', '12mp', '25mp'] as const) images.push(await syntheticJpeg(label))
const selected = images.filter((i) => !flags.only || i.name.includes(flags.only))
const repsFor = (i: BenchImage) =>
  Math.max(1, Math.round(scale * (i.width * i.height > 5e6 ? 3 : i.name.includes('1mp') ? 7 : 3)))
const samples: Samples[] = selected.map((image) => ({
  image,
  reps: repsFor(image),
  mask: [],
  cutout: [],
  api: [],
  reference: [],
}))

log('starting the inference server…')
const server = await startInference({}, flags.verbose)
let api: ApiStack | undefined
let apiError: string | undefined
if (!flags['no-api']) {
  log('starting wrangler dev…')
  try {
    api = await startApi(server, flags.verbose)
  } catch (err) {
    apiError = String(err)
    log(`API path skipped: ${apiError}`)
  }
}
const floor = await createFloor()
const reference = flags['no-reference'] ? undefined : createReference()
const floorTimes: number[] = []

let serverRss = 0
let levelsApi: Awaited<ReturnType<typeof timeLevelsThroughApi>> | undefined
try {
  // Warm-up (untimed): first runs allocate and JIT.
  const warm = samples.find((s) => s.image.name.includes('1mp'))?.image ?? selected[0]
  log(`warm-up on ${warm.name}…`)
  for (let i = 0; i < 2; i++) await floor.run()
  await callServer(server, warm, MASK_OPTIONS)
  await callServer(server, warm, CUTOUT_OPTIONS)
  if (api) await callApi(api, warm, API_OPTIONS)
  if (reference) await reference(warm)

  const rounds = Math.max(...samples.map((s) => s.reps))
  for (let round = 0; round < rounds; round++) {
    for (const s of samples) {
      if (round >= s.reps) continue
      const t0 = performance.now()
      await floor.run()
      floorTimes.push(performance.now() - t0)
      s.mask.push(await callServer(server, s.image, MASK_OPTIONS))
      s.cutout.push(await callServer(server, s.image, CUTOUT_OPTIONS))
      if (api) s.api.push(await callApi(api, s.image, API_OPTIONS))
      if (reference) {
        const r0 = performance.now()
        await reference(s.image)
        s.reference.push(performance.now() - r0)
      }
      const last = (xs: { ms?: number }[]) => (xs.length ? (xs[xs.length - 1] as { ms: number }).ms.toFixed(0) : '-')
      log(
        `round ${round + 1}/${s.reps} ${s.image.name}: floor ${floorTimes[floorTimes.length - 1].toFixed(0)} ms, mask ${last(s.mask)}, cutout ${last(s.cutout)}, api ${s.api.length ? s.api[s.api.length - 1].total.toFixed(0) : '-'}, reference ${s.reference.length ? s.reference[s.reference.length - 1].toFixed(0) : '-'}`,
      )
    }
  }
  const oneMpImage = samples.find((s) => s.image.name.includes('1mp'))?.image
  if (!flags['no-levels'] && oneMpImage) {
    levelsApi = await timeLevelsThroughApi(server, api, oneMpImage, Math.max(3, Math.round(5 * scale)), log)
  }
} finally {
  serverRss = server.child.proc.pid ? rssOf(server.child.proc.pid) : 0
  await floor.close()
  await api?.stop()
  await server.stop()
}

const floorStats = stats(floorTimes)
const f = floorStats.median
const ratio = (v: number | undefined, base: number | undefined) =>
  v === undefined || base === undefined || !base ? null : round(v / base, 2)
const medianOf = (xs: number[]) => (xs.length ? median(xs) : undefined)

const results = samples.map((s) => {
  const cutoutMedian = medianOf(s.cutout.map((c) => c.ms))
  const maskMedian = medianOf(s.mask.map((c) => c.ms))
  const apiRemoval = medianOf(s.api.map((c) => c.removal + c.download))
  const refMedian = medianOf(s.reference)
  const stages = (calls: ServerCall[]) =>
    Object.fromEntries(
      Object.keys(calls[0]?.timing ?? {}).map((k) => [k, round(median(calls.map((c) => c.timing[k])), 1)]),
    )
  return {
    name: s.image.name,
    width: s.image.width,
    height: s.image.height,
    megapixels: round((s.image.width * s.image.height) / 1e6, 2),
    inputBytes: s.image.bytes.length,
    server: {
      mask: stats(s.mask.map((c) => c.ms)),
      maskFirstStage: stats(s.mask.map((c) => c.firstStageMs)),
      maskStages: stages(s.mask),
      maskBytes: s.mask[0]?.bytes,
      cutout: stats(s.cutout.map((c) => c.ms)),
      cutoutFirstStage: stats(s.cutout.map((c) => c.firstStageMs)),
      cutoutStages: stages(s.cutout),
      cutoutBytes: s.cutout[0]?.bytes,
    },
    api: s.api.length
      ? {
          upload: stats(s.api.map((c) => c.upload)),
          removal: stats(s.api.map((c) => c.removal)),
          download: stats(s.api.map((c) => c.download)),
          removalAndDownload: stats(s.api.map((c) => c.removal + c.download)),
          total: stats(s.api.map((c) => c.total)),
        }
      : null,
    reference: s.reference.length ? stats(s.reference) : null,
    ratios: {
      serverMaskToFloor: ratio(maskMedian, f),
      serverCutoutToFloor: ratio(cutoutMedian, f),
      apiRemovalToFloor: ratio(apiRemoval, f),
      referenceToFloor: ratio(refMedian, f),
      serverCutoutToReference: ratio(cutoutMedian, refMedian),
      apiRemovalToReference: ratio(apiRemoval, refMedian),
    },
    beyondModelMs: {
      serverCutout: cutoutMedian === undefined ? null : round(cutoutMedian - f, 0),
      apiRemoval: apiRemoval === undefined ? null : round(apiRemoval - f, 0),
    },
  }
})

const oneMp = results.find((r) => r.name.includes('1mp'))
const big = results.find((r) => r.name.includes('25mp'))
const targets = {
  pipelineAt1MP: {
    rule: 'inference-server end to end (cutout) ≤ 1.25 × floor at 1 MP',
    value: oneMp?.ratios.serverCutoutToFloor ?? null,
    ok: oneMp?.ratios.serverCutoutToFloor != null ? oneMp.ratios.serverCutoutToFloor <= 1.25 : null,
    apiValue: oneMp?.ratios.apiRemovalToFloor ?? null,
  },
  fasterThanReference: {
    rule: 'inference-server cutout faster than removeBackground on every image',
    ok: results.every((r) => r.ratios.serverCutoutToReference === null || r.ratios.serverCutoutToReference < 1),
    apiOk: results.every((r) => r.ratios.apiRemovalToReference === null || r.ratios.apiRemovalToReference < 1),
  },
  stored25MP: {
    rule: '25 MP cutout stored (API removal until the job has succeeded, + download) ≤ 3 s beyond model time',
    seconds: big?.beyondModelMs.apiRemoval != null ? round(big.beyondModelMs.apiRemoval / 1000, 2) : null,
    removalOnlySeconds: big?.api ? round((big.api.removal.median - f) / 1000, 2) : null,
    ok: big?.api ? big.api.removal.median - f <= 3000 : null,
  },
}

const report = {
  name: flags.name,
  date: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - started) / 1000),
  machine,
  method: {
    floor:
      'bare session.run at [1,3,1024,1024], fp16 ISNet, 2 intra-op threads, arena on and no memory pattern (the server options, session-memory.ts)',
    server: `POST /v1/remove, options ${JSON.stringify(MASK_OPTIONS)} | ${JSON.stringify(CUTOUT_OPTIONS)} and the image as signed parts; time from signing to the done frame (the PNG read from the result output); firstStage: to the first stage frame`,
    api: `wrangler dev: upload (create, PUT, complete), POST /v1/removals Prefer: wait=8 ${JSON.stringify(API_OPTIONS)}, GET result; "removalAndDownload" excludes the upload`,
    reference:
      "@imgly/background-removal-node removeBackground(blob, { model: 'medium', output: { format: 'image/png' } }), session memoised by the package",
    rounds: scale,
    apiError,
  },
  floor: floorStats,
  serverRssBytesAtEnd: serverRss,
  images: results,
  targets,
}

mkdirSync(RESULTS_DIR, { recursive: true })
writeFileSync(`${RESULTS_DIR}${flags.name}.json`, `${JSON.stringify(report, null, 2)}\n`)
writeFileSync(`${RESULTS_DIR}${flags.name}.svg`, ratioChart(report))
log(`\nfloor median ${f.toFixed(0)} ms`)
for (const r of results) log(`${r.name.padEnd(22)} ${JSON.stringify(r.ratios)}`)
log(JSON.stringify(targets, null, 2))
log(`wrote bench/results/${flags.name}.json and .svg in ${report.durationSeconds} s`)

if (!flags['no-levels']) {
  log('\nquality levels: input-size sweep and web runtime…')
  const sweep = await runLevelsBench({ reps: Math.max(3, Math.round(3 * scale)), log })
  const chosen = sweep.candidates.find((c) => c.side === FAST_DEFAULTS.side && c.shape === FAST_DEFAULTS.shape)
  const fixtures = Object.fromEntries(Object.entries(sweep.iou).filter(([n]) => !n.includes('-on-')))
  const chosenKey = chosen?.key ?? ''
  const levelTargets = {
    fastInput: { side: FAST_DEFAULTS.side, shape: FAST_DEFAULTS.shape },
    fastAtModel: {
      rule: 'fast ≥ 2× faster than balanced at the model (1 MP)',
      value: chosen?.speedup,
      ok: (chosen?.speedup ?? 0) >= 2,
    },
    fastThroughApi: {
      rule: 'fast ≥ 2× faster than balanced through the API (1 MP, removal + download)',
      value: levelsApi?.balancedOverFast.api ?? null,
      ok: levelsApi?.balancedOverFast.api != null ? levelsApi.balancedOverFast.api >= 2 : null,
    },
    // Reported, no longer a target (issue 22): fast's quality is judged against real ground truth
    // (quality-gt-<name>.json, targets.fast), not by agreement with balanced.
    fastIoUOnFixtures: {
      rule: 'retired (issue 22): mask IoU against balanced on the fixture photos, for information',
      values: Object.fromEntries(Object.entries(fixtures).map(([n, r]) => [n, r[chosenKey]])),
    },
  }
  writeFileSync(
    `${RESULTS_DIR}levels-${flags.name}.json`,
    `${JSON.stringify({ name: flags.name, date: new Date().toISOString(), machine, targets: levelTargets, throughApi: levelsApi ?? null, ...sweep }, null, 2)}\n`,
  )
  log(`${JSON.stringify(levelTargets)}\nwrote bench/results/levels-${flags.name}.json`)
}

if (!flags['no-throughput'] && !flags['no-api']) {
  log('\nthroughput: one 2-thread session vs two 1-thread sessions…')
  const throughput = await runThroughputBench({ rounds: Math.max(1, Math.round(2 * scale)), log })
  writeFileSync(
    `${RESULTS_DIR}throughput-${flags.name}.json`,
    `${JSON.stringify({ name: flags.name, date: new Date().toISOString(), machine, ...throughput }, null, 2)}\n`,
  )
  log(`${JSON.stringify(throughput.results)}\nwrote bench/results/throughput-${flags.name}.json`)
}

if (!flags['no-gt']) {
  log('\nground-truth quality benchmark (real photos of ../shared/gt)…')
  await writeGtReport(flags.name)
}

if (!flags['no-quality']) {
  log("\nquality benchmark (synthetic composites: the truth is the model's own mask)…")
  const quality = await runQualityBench({ log })
  writeFileSync(
    `${RESULTS_DIR}quality-synthetic-${flags.name}.json`,
    `${JSON.stringify({ name: flags.name, date: new Date().toISOString(), machine, ...quality }, null, 2)}\n`,
  )
  log(`${JSON.stringify(quality.meanBySize)}\nwrote bench/results/quality-synthetic-${flags.name}.json`)
}

if (!flags['no-refinement']) {
  log('\nrefinement benchmark…')
  const refinement = await runRefinementBench({ log })
  writeFileSync(
    `${RESULTS_DIR}refinement-${flags.name}.json`,
    `${JSON.stringify({ name: flags.name, date: new Date().toISOString(), machine, ...refinement }, null, 2)}\n`,
  )
  log(`${JSON.stringify(refinement.meanSad)}\nwrote bench/results/refinement-${flags.name}.json`)
}

if (!flags['no-tryon']) {
  log('\ntry-on benchmark…')
  const tryOn = await runTryOnBench({ log })
  writeFileSync(
    `${RESULTS_DIR}tryon-${flags.name}.json`,
    `${JSON.stringify({ name: flags.name, date: new Date().toISOString(), machine, ...tryOn }, null, 2)}\n`,
  )
  log(`try-on ${tryOn.tryOnInModelRuns} model runs\nwrote bench/results/tryon-${flags.name}.json`)
}

if (!flags['no-catalog']) {
  log('\ncatalog benchmark…')
  const catalog = await runCatalogBench({ rounds: Math.max(1, Math.round(5 * scale)), log })
  writeFileSync(
    `${RESULTS_DIR}catalog-${flags.name}.json`,
    `${JSON.stringify({ name: flags.name, date: new Date().toISOString(), machine, ...catalog }, null, 2)}\n`,
  )
  log(`${JSON.stringify(catalog.cases)}\nwrote bench/results/catalog-${flags.name}.json`)
}

if (!flags['no-clicks']) {
  log(`\nclicks benchmark (${flags['no-api'] ? 'direct' : 'API'} mode)…`)
  const clicks = await runClicksBench({ direct: flags['no-api'], verbose: flags.verbose, log })
  writeFileSync(
    `${RESULTS_DIR}clicks-${flags.name}.json`,
    `${JSON.stringify({ name: flags.name, date: new Date().toISOString(), machine, ...clicks }, null, 2)}\n`,
  )
  log(`${formatTable(clicks.groups)}\nwrote bench/results/clicks-${flags.name}.json`)
}
