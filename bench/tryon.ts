/**
 * The try-on benchmark (DESIGN.md §4: "a try-on at 1 MP in ≤ 3 model runs' time"): the CPU
 * try-on model on a 1 MP person photo (the astronaut fixture enlarged to 1024², lanczos3) and a
 * 1 MP made T-shirt, against one segmentation model call (`segmenter.segment`, the ISNet run with
 * its pre- and post-processing) on the same person photo, interleaved in the same run, in process
 * (no HTTP). Run by `npm run bench -- all` (skip with --no-tryon) or alone: `npm run bench -- tryon [name]`.
 * Writes bench/results/tryon-<name>.json. Never an assertion: it reports.
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { createCpuTryOn } from '../inference-server/src/tryon/cpu.js'
import { renderSvg, tshirtSvg } from '../inference-server/test/garments.js'
import { sharp } from './lib/deps.js'
import { fixturePhoto } from './lib/images.js'
import { machineInfo, RESULTS_DIR, round, stats } from './lib/util.js'

const SIDE = 1024
const BUDGET_MODEL_RUNS = 3

export async function runTryOnBench({ log, rounds = 5 }: { log: (msg: string) => void; rounds?: number }) {
  const astronaut = await fixturePhoto('astronaut.png')
  const person = await sharp(astronaut.bytes).resize(SIDE, SIDE, { kernel: 'lanczos3' }).png().toBuffer()
  // The shirt drawn at 1 MP too (its SVG is 600×640).
  const garment = await renderSvg(
    tshirtSvg().replace('width="600" height="640"', 'width="990" height="1056" viewBox="0 0 600 640"'),
  )
  const personImage = (await decodeImage(person)).image
  const segmenter = await createSegmenter()
  const model = createCpuTryOn()
  await model.ready()
  const context = { segmenter, onStage: () => {} }
  const options = { category: 'upper_body' as const, seed: 1 }
  const segmentMs: number[] = []
  const tryOnMs: number[] = []
  let steps: Record<string, number> = {}
  // One warm-up of each, then interleaved rounds so load from other processes falls on both alike.
  await segmenter.segment(personImage)
  await model.tryOn({ person, garment }, options, context)
  for (let i = 0; i < rounds; i++) {
    let started = performance.now()
    await segmenter.segment(personImage)
    segmentMs.push(performance.now() - started)
    started = performance.now()
    const result = await model.tryOn({ person, garment }, options, context)
    tryOnMs.push(performance.now() - started)
    steps = result.timings
    log(`round ${i + 1}: segment ${segmentMs.at(-1)?.toFixed(0)} ms, try-on ${tryOnMs.at(-1)?.toFixed(0)} ms`)
  }
  await model.close()
  await segmenter.close()
  const seg = stats(segmentMs)
  const tryOn = stats(tryOnMs)
  const modelRuns = round(tryOn.median / seg.median)
  return {
    person: { width: SIDE, height: SIDE },
    garment: { width: 990, height: 1056 },
    rounds,
    segmentMs: seg,
    tryOnMs: tryOn,
    /** The last run's steps (ms): the garment's segmentation is one model run of its own. */
    lastTryOnSteps: steps,
    tryOnInModelRuns: modelRuns,
    target: { maxModelRuns: BUDGET_MODEL_RUNS, met: modelRuns <= BUDGET_MODEL_RUNS },
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const name = process.argv[2] ?? 'latest'
  const log = (msg: string) => process.stderr.write(`${msg}\n`)
  const report = { name, date: new Date().toISOString(), machine: machineInfo(), ...(await runTryOnBench({ log })) }
  writeFileSync(`${RESULTS_DIR}tryon-${name}.json`, `${JSON.stringify(report, null, 2)}\n`)
  log(`try-on ${report.tryOnInModelRuns} model runs; wrote bench/results/tryon-${name}.json`)
}
