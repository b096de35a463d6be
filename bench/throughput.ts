/**
 * Throughput on this machine (issue 14; part of `npm run bench -- all`, or alone: `npm run bench -- throughput`):
 * images per minute at 1 MP through the API (wrangler dev + the inference server), balanced
 * cutouts, two clients sending back to back, for
 *   - one session with 2 intra-op threads (INFERENCE_SESSIONS=1 INFERENCE_THREADS=2), and
 *   - two sessions with 1 thread each, two images at once (INFERENCE_SESSIONS=2 INFERENCE_THREADS=1).
 * The configurations alternate in rounds, each on a fresh stack, so load from others falls on both.
 * Writes bench/results/throughput-<name>.json; main.ts's default follows the winner.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { callApi } from './lib/clients.js'
import { syntheticJpeg } from './lib/images.js'
import { startApi, startInference } from './lib/stack.js'
import { machineInfo, median, RESULTS_DIR, round, rssOf } from './lib/util.js'

export const THROUGHPUT_CONFIGS = [
  { name: '1 session × 2 threads', env: { INFERENCE_SESSIONS: '1', INFERENCE_THREADS: '2' } },
  { name: '2 sessions × 1 thread', env: { INFERENCE_SESSIONS: '2', INFERENCE_THREADS: '1' } },
] as const
const CLIENTS = 2
const OPTIONS = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' }

/** One stack, `images` removals from CLIENTS clients at once: images per minute and server RSS. */
async function measure(env: Record<string, string>, images: number, log: (m: string) => void) {
  const image = await syntheticJpeg('1mp')
  const server = await startInference(env)
  try {
    const api = await startApi(server)
    try {
      await Promise.all(Array.from({ length: CLIENTS }, () => callApi(api, image, OPTIONS))) // warm-up
      let next = 0
      const t0 = performance.now()
      const client = async () => {
        while (next++ < images) await callApi(api, image, OPTIONS)
      }
      await Promise.all(Array.from({ length: CLIENTS }, client))
      const seconds = (performance.now() - t0) / 1000
      const rss = server.child.proc.pid ? rssOf(server.child.proc.pid) : 0
      log(`throughput ${JSON.stringify(env)}: ${images} images in ${seconds.toFixed(1)} s`)
      return { imagesPerMinute: (images / seconds) * 60, rssMB: Math.round(rss / 2 ** 20) }
    } finally {
      await api.stop()
    }
  } finally {
    await server.stop()
  }
}

export async function runThroughputBench({
  images = 8,
  rounds = 2,
  log = (m: string) => process.stderr.write(`${m}\n`),
} = {}) {
  const samples = THROUGHPUT_CONFIGS.map(() => [] as { imagesPerMinute: number; rssMB: number }[])
  for (let r = 0; r < rounds; r++) {
    for (const [i, config] of THROUGHPUT_CONFIGS.entries()) samples[i].push(await measure(config.env, images, log))
  }
  const results = THROUGHPUT_CONFIGS.map((c, i) => ({
    config: c.name,
    env: c.env,
    imagesPerMinute: round(median(samples[i].map((s) => s.imagesPerMinute)), 2),
    perRound: samples[i].map((s) => round(s.imagesPerMinute, 2)),
    serverRssMBAtEnd: Math.max(...samples[i].map((s) => s.rssMB)),
  }))
  const best = results.reduce((a, b) => (b.imagesPerMinute > a.imagesPerMinute ? b : a))
  return {
    method: `${images} balanced 1 MP cutouts through the API (upload, POST /v1/removals, result) per stack, ${CLIENTS} clients back to back, median of ${rounds} alternating rounds`,
    results,
    best: best.config,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      name: { type: 'string', default: 'latest' },
      images: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '2' },
    },
  })
  const result = await runThroughputBench({ images: Number(values.images), rounds: Number(values.rounds) })
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}throughput-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stderr.write(`${JSON.stringify(result.results, null, 2)}\nwrote ${file}\n`)
}
