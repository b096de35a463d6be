/**
 * `npm run bench -- malloc [--reps 4] [--name <name>]`: the inference server with glibc's fixed mmap
 * threshold (MALLOC_ENV, inference-server/src/segmentation/session-memory.ts) against without it,
 * both up at once and called in turn so load falls on both alike: each request's time and its
 * stages (the server's timings), and the server's RSS after it, at 1, 12 and 25 MP (cutouts,
 * `balanced`). Large images are where a fixed threshold could cost: every large buffer is then a
 * fresh mapping whose pages are faulted in. Writes bench/results/malloc-<name>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { MALLOC_ENV } from '../inference-server/src/segmentation/session-memory.js'
import { callServer } from './lib/clients.js'
import { syntheticJpeg } from './lib/images.js'
import { type InferenceServer, startInference } from './lib/stack.js'
import { machineInfo, median, RESULTS_DIR, round, rssOf } from './lib/util.js'

const { values: flags } = parseArgs({
  options: { reps: { type: 'string', default: '4' }, name: { type: 'string', default: 'latest' } },
})
const reps = Number(flags.reps)
const OPTIONS = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const
const unset = Object.fromEntries(Object.keys(MALLOC_ENV).map((name) => [name, undefined]))

const servers: Record<'fixed' | 'dynamic', InferenceServer> = {
  fixed: await startInference({ ...MALLOC_ENV }),
  dynamic: await startInference(unset),
}
const rows: { server: string; image: string; ms: number; timing: Record<string, number>; rssMB: number }[] = []
try {
  for (const label of ['1mp', '12mp', '25mp'] as const) {
    const image = await syntheticJpeg(label)
    // One call each first: the first run at a size grows the arena, not what is compared.
    for (const server of Object.values(servers)) await callServer(server, image, OPTIONS)
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 ? (['dynamic', 'fixed'] as const) : (['fixed', 'dynamic'] as const)
      for (const name of order) {
        const server = servers[name]
        const call = await callServer(server, image, OPTIONS)
        const rssMB = Math.round(rssOf(server.child.proc.pid!) / 2 ** 20)
        rows.push({ server: name, image: label, ms: round(call.ms, 0), timing: call.timing, rssMB })
        process.stderr.write(`${label} ${name}: ${Math.round(call.ms)} ms, RSS ${rssMB} MB\n`)
      }
    }
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()))
}

const summary = Object.fromEntries(
  ['1mp', '12mp', '25mp'].map((image) => [
    image,
    Object.fromEntries(
      (['fixed', 'dynamic'] as const).map((server) => {
        const mine = rows.filter((r) => r.image === image && r.server === server)
        return [server, { medianMs: median(mine.map((r) => r.ms)), maxRssMB: Math.max(...mine.map((r) => r.rssMB)) }]
      }),
    ),
  ]),
)
const report = {
  name: flags.name,
  date: new Date().toISOString(),
  machine: machineInfo(),
  method: {
    servers: { fixed: MALLOC_ENV, dynamic: 'no MALLOC_* setting (glibc dynamic mmap threshold)' },
    options: OPTIONS,
    reps,
    order:
      'both servers up at once, called in turn, the order alternating each rep; one call each at a size first, not counted',
  },
  summary,
  rows,
}
mkdirSync(RESULTS_DIR, { recursive: true })
const out = `${RESULTS_DIR}/malloc-${flags.name}.json`
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
console.log(JSON.stringify(summary, null, 2))
console.log(`wrote ${out}`)
