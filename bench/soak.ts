/**
 * `npm run bench -- soak`: 1,000 sequential removals against one inference server (real model),
 * sampling its resident memory, to show it stays flat (DESIGN.md §4: steady RSS ≤ 1.2 GB, no
 * growth across 1,000 requests). Inputs cycle through small images (the fixture photos and a
 * 1 MP JPEG) and through the options (fast/balanced, mask/cutout, raw/binary, feather 0–2), so every
 * allocation path of those levels is exercised; the model run dominates each request.
 * Writes bench/results/soak-<name>.json: the RSS after every request, the peak sampled every
 * 250 ms, and the verdict. Growth compares the median RSS of the first 10 % of requests after the
 * warm-up with the median of the last 10 %.
 *
 * Flags: --requests <n> (default 1000), --warmup <n> (default 50), --name <name> (default "latest").
 * Takes about 20–35 minutes on 2 cores (the model run is ~1–2 s).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { MALLOC_ENV } from '../inference-server/src/segmentation/session-memory.js'
import { callServer, type ServerOptions } from './lib/clients.js'
import { fixturePhoto, syntheticJpeg, type BenchImage } from './lib/images.js'
import { startInference } from './lib/stack.js'
import { machineInfo, median, RESULTS_DIR, rssOf, round } from './lib/util.js'

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '50' },
    name: { type: 'string', default: 'latest' },
    verbose: { type: 'boolean', default: false },
  },
})
const total = Number(flags.requests)
const warmup = Math.min(Number(flags.warmup), Math.floor(total / 4))
const log = (msg: string) => process.stderr.write(`${msg}\n`)

const images: BenchImage[] = [
  await fixturePhoto('astronaut.png'),
  await fixturePhoto('rocket.jpg'),
  await syntheticJpeg('1mp'),
  await fixturePhoto('coffee.png'),
  await fixturePhoto('chelsea.png'),
]
const raw = (feather: number) => ({ mode: 'raw', feather }) as const
const binary = (threshold: number, feather: number) => ({ mode: 'binary', threshold, feather }) as const
const optionSets: ServerOptions[] = [
  { quality: 'balanced', alpha: raw(0), output: 'cutout' },
  { quality: 'fast', alpha: binary(0.5, 1), output: 'mask' },
  { quality: 'balanced', alpha: raw(2), output: 'cutout' },
  { quality: 'fast', alpha: raw(0), output: 'cutout' },
  { quality: 'balanced', alpha: binary(0.3, 0), output: 'mask' },
  { quality: 'balanced', alpha: raw(0), output: 'mask' },
]

const MB = 2 ** 20
const started = Date.now()
const server = await startInference({}, flags.verbose)
const pid = server.child.proc.pid!
const rssAtReady = rssOf(pid)
let peak = rssAtReady
const sampler = setInterval(() => {
  try {
    peak = Math.max(peak, rssOf(pid))
  } catch {
    // exited
  }
}, 250)

mkdirSync(RESULTS_DIR, { recursive: true })
const rss: number[] = []
const ms: number[] = []
let failures = 0
try {
  for (let i = 0; i < total; i++) {
    const image = images[i % images.length]
    const options = optionSets[i % optionSets.length]
    try {
      ms.push((await callServer(server, image, options)).ms)
    } catch (err) {
      failures++
      log(`request ${i}: ${String(err).slice(0, 200)}`)
    }
    rss.push(rssOf(pid))
    // Partial results every 50 requests, so an interrupted soak still leaves its series.
    if ((i + 1) % 50 === 0 && i + 1 > warmup + 10) write(buildReport(false))
    if ((i + 1) % 50 === 0)
      log(
        `${i + 1}/${total}: RSS ${(rss[i] / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB, median ${median(ms.slice(-50)).toFixed(0)} ms/request`,
      )
  }
} finally {
  clearInterval(sampler)
  await server.stop()
}

function buildReport(complete: boolean) {
  const steady = rss.slice(warmup)
  const tenth = Math.max(1, Math.floor(steady.length / 10))
  const early = median(steady.slice(0, tenth))
  const late = median(steady.slice(-tenth))
  const growth = (late - early) / early
  const steadyMax = Math.max(...steady)
  return {
    name: flags.name,
    complete,
    date: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: machineInfo(),
    method: {
      requests: total,
      completedRequests: rss.length,
      warmup,
      images: images.map((i) => `${i.name} ${i.width}×${i.height}`),
      options: optionSets,
      server:
        'inference-server/src/main.ts with its defaults (concurrency 1, 2 intra-op threads, arena on and no memory pattern, model in a worker thread)',
      // What bench/lib/stack.ts starts it with: MALLOC_ENV, under any MALLOC_* of this environment.
      malloc: {
        ...MALLOC_ENV,
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MALLOC_'))),
      },
      growth: 'median RSS of the first 10 % of requests after the warm-up vs the last 10 %',
      rss: 'VmRSS of the server process after each response; peak sampled every 250 ms (includes the model run)',
    },
    failures,
    requestMs: { median: round(median(ms), 0), min: round(Math.min(...ms), 0), max: round(Math.max(...ms), 0) },
    rssMB: {
      atReady: round(rssAtReady / MB, 0),
      earlyMedian: round(early / MB, 0),
      lateMedian: round(late / MB, 0),
      steadyMax: round(steadyMax / MB, 0),
      peakSampled: round(peak / MB, 0),
    },
    growthPercent: round(growth * 100, 2),
    targets: {
      steadyRssAtMost1200MB: steadyMax / MB <= 1200,
      growthUnder5Percent: growth < 0.05,
    },
    rssAfterEachRequestMB: rss.map((v) => round(v / MB, 1)),
  }
}
function write(report: ReturnType<typeof buildReport>): void {
  writeFileSync(`${RESULTS_DIR}soak-${flags.name}.json`, `${JSON.stringify(report, null, 2)}\n`)
}
const report = buildReport(true)
mkdirSync(RESULTS_DIR, { recursive: true })
write(report)
log(JSON.stringify({ ...report, rssAfterEachRequestMB: `[${rss.length} samples]` }, null, 2))
log(`wrote bench/results/soak-${flags.name}.json`)
