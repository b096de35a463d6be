/**
 * The input-size sweep that picks `fast`'s size (issue 14; part of `npm run bench -- all`, or alone:
 * `npm run bench -- levels`). For each candidate input, on the size-agnostic model:
 * - time at the model: the segmenter (model thread, 2 threads, tensor in and mask out) on the 1 MP
 *   synthetic JPEG, median of `reps`, interleaved with the native 1024² so load falls alike;
 * - mask IoU (α ≥ 0.5) against `balanced` (1024²) on the fixture photos and the quality benchmark's
 *   4 MP and 12 MP composites.
 * The pick: the fastest candidate with IoU ≥ 0.95 on every image and ≥ 2× faster than 1024².
 * Writes bench/results/levels-<name>.json. With `--whole`, instead: `fast` against `balanced` end to
 * end, a removal's job time through the public API at 1 MP (`--reps` rounds, default 5) and 12 MP
 * (`--big-reps`, default 3), interleaved (bench/lib/whole-removal.ts) → bench/results/levels-whole-<name>.json
 * (`NODE_OPTIONS=--experimental-websocket` on Node 20: the API stack needs it).
 * With `--fast-colours`: `fast`'s cutout edge colours estimated at its input's pixels (as shipped
 * since issue 44) against the 4 MP working size it had before, on the synthetic composites whose
 * true foreground is known (quality-synthetic.ts) → bench/results/levels-fast-colours-<name>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import type { Mask, RgbImage } from '../inference-server/src/imaging/types.js'
import { createSegmenter, type InputSize, type Segmenter } from '../inference-server/src/segmentation/index.js'
import { type ApiCall, callApi, callServer, type ServerCall } from './lib/clients.js'
import { type BenchImage, FIXTURE_PHOTOS, fixturePhoto, syntheticJpeg } from './lib/images.js'
import type { ApiStack, InferenceServer } from './lib/stack.js'
import { machineInfo, median, RESULTS_DIR, round } from './lib/util.js'
import { fixtureMasks, makeComposites } from './lib/composites.js'
import { edgeColourError } from './lib/matting-metrics.js'
import { type CandidateShape, candidateInput } from './lib/input-shapes.js'
import { timeWholeRemovals } from './lib/whole-removal.js'
import { composeCutout } from '../inference-server/src/imaging/compose.js'
import { decontaminate } from '../inference-server/src/imaging/refine.js'
import { levelAlpha } from '../inference-server/src/remove.js'

type Candidate = { side: number; shape: CandidateShape }

/** What `npm run bench -- all` sweeps: the pick and its neighbours, to fit the bench's time. */
export const CANDIDATES: Candidate[] = [
  { side: 512, shape: 'square' },
  { side: 640, shape: 'square' },
  { side: 704, shape: 'square' },
  { side: 640, shape: 'aspect' },
  { side: 704, shape: 'aspect' },
]

/**
 * The full sweep (`npm run bench -- levels --full --name sweep` → bench/results/levels-sweep.json):
 * every square side from 512 to 960 and the aspect inputs, so the results show where (if
 * anywhere below 1024²) each image's IoU reaches 0.95, even at sizes too slow to be `fast`.
 */
export const FULL_SWEEP: Candidate[] = [
  ...[512, 576, 640, 704, 768, 832, 896, 960].map((side) => ({ side, shape: 'square' as const })),
  ...[576, 640, 704].map((side) => ({ side, shape: 'aspect' as const })),
]
const NATIVE: InputSize = { width: 1024, height: 1024 }
const MIN_IOU = 0.95
const MIN_SPEEDUP = 2

/** Intersection over union of the two masks' foregrounds (α ≥ 0.5). */
export function maskIoU(a: Mask, b: Mask): number {
  let inter = 0
  let union = 0
  for (let i = 0; i < a.data.length; i++) {
    const x = a.data[i] >= 128
    const y = b.data[i] >= 128
    if (x && y) inter++
    if (x || y) union++
  }
  return union ? inter / union : 1
}

const label = (c: Candidate) => `${c.shape}-${c.side}`

async function images(): Promise<{ name: string; image: RgbImage }[]> {
  const out: { name: string; image: RgbImage }[] = []
  for (const name of FIXTURE_PHOTOS) {
    out.push({ name, image: (await decodeImage((await fixturePhoto(name)).bytes)).image })
  }
  return out
}

/** Model time per candidate on the 1 MP JPEG, interleaved with 1024² (ms, medians). */
async function timeAtModel(segmenter: Segmenter, candidates: Candidate[], reps: number, log: (m: string) => void) {
  const { image } = await decodeImage((await syntheticJpeg('1mp')).bytes)
  const inputs = [{ key: 'native-1024', size: NATIVE }].concat(
    candidates.map((c) => ({ key: label(c), size: candidateInput(image, c.side, c.shape, 64) })),
  )
  const times = new Map<string, number[]>(inputs.map((i) => [i.key, []]))
  for (const i of inputs) await segmenter.segment(image, i.size) // warm-up: first runs allocate
  for (let r = 0; r < reps; r++) {
    for (const i of inputs) {
      const t0 = performance.now()
      await segmenter.segment(image, i.size)
      times.get(i.key)?.push(performance.now() - t0)
    }
    log(`levels: timing round ${r + 1}/${reps}`)
  }
  return Object.fromEntries(inputs.map((i) => [i.key, { input: i.size, ms: round(median(times.get(i.key) ?? []), 0) }]))
}

const LEVELS = ['fast', 'balanced', 'high'] as const

/**
 * Each level through the inference server (mask) and the API (cutout) on `image`, interleaved per
 * round so load falls on all alike; medians in ms, and balanced's time over fast's.
 */
export async function timeLevelsThroughApi(
  server: InferenceServer,
  api: ApiStack | undefined,
  image: BenchImage,
  reps: number,
  log: (m: string) => void,
) {
  const server_: Record<string, ServerCall[]> = { fast: [], balanced: [], high: [] }
  const api_: Record<string, ApiCall[]> = { fast: [], balanced: [], high: [] }
  const base = { alpha: { mode: 'raw', feather: 0 } } as const
  for (let r = 0; r < reps; r++) {
    for (const quality of LEVELS) {
      server_[quality].push(await callServer(server, image, { ...base, quality, output: 'mask' }))
      if (api) api_[quality].push(await callApi(api, image, { ...base, quality, output: 'cutout' }))
    }
    log(`levels through the API: round ${r + 1}/${reps}`)
  }
  const out = Object.fromEntries(
    LEVELS.map((q) => [
      q,
      {
        serverMaskMs: round(median(server_[q].map((c) => c.ms)), 0),
        apiRemovalAndDownloadMs: api_[q].length ? round(median(api_[q].map((c) => c.removal + c.download)), 0) : null,
      },
    ]),
  )
  const ratio = (a: number | null, b: number | null) => (a && b ? round(a / b, 2) : null)
  return {
    image: image.name,
    reps,
    levels: out,
    balancedOverFast: {
      server: ratio(out.balanced.serverMaskMs, out.fast.serverMaskMs),
      api: ratio(out.balanced.apiRemovalAndDownloadMs, out.fast.apiRemovalAndDownloadMs),
    },
  }
}

/** onnxruntime-web (wasm) against onnxruntime-node: time at 1024² on 1 MP and mask MAD on the fixtures. */
async function webRuntime(native: Segmenter, reps: number, log: (m: string) => void) {
  const web = await createSegmenter({ runtime: 'web' })
  try {
    const { image } = await decodeImage((await syntheticJpeg('1mp')).bytes)
    const times = { node: [] as number[], web: [] as number[] }
    await web.segment(image, NATIVE)
    for (let r = 0; r < reps; r++) {
      for (const [key, s] of [
        ['node', native],
        ['web', web],
      ] as const) {
        const t0 = performance.now()
        await s.segment(image, NATIVE)
        times[key].push(performance.now() - t0)
      }
    }
    const mad: Record<string, number> = {}
    for (const { name, image: photo } of await images()) {
      const [a, b] = [await native.segment(photo, NATIVE), await web.segment(photo, NATIVE)]
      let sum = 0
      for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i] - b.data[i])
      mad[name] = round(sum / a.data.length, 4)
    }
    log(`levels: web runtime ${JSON.stringify(mad)}`)
    return {
      nodeMs1mp: round(median(times.node), 0),
      webMs1mp: round(median(times.web), 0),
      webOverNode: round(median(times.web) / median(times.node), 2),
      maskMadOnFixtures: mad,
      rule: 'mask MAD ≤ 1 (8-bit) against onnxruntime-node',
      ok: Object.values(mad).every((v) => v <= 1),
    }
  } finally {
    await web.close()
  }
}

export async function runLevelsBench({
  reps = 3,
  web = true,
  candidates = CANDIDATES,
  log = (m: string) => process.stderr.write(`${m}\n`),
} = {}) {
  const segmenter = await createSegmenter()
  try {
    const timing = await timeAtModel(segmenter, candidates, reps, log)
    const composites = await makeComposites(await fixtureMasks(segmenter))
    const set = await images()
    for (const c of composites) set.push({ name: c.name, image: (await decodeImage(c.bytes)).image })
    const iou: Record<string, Record<string, number>> = {}
    for (const { name, image } of set) {
      const balanced = await segmenter.segment(image, NATIVE)
      iou[name] = {}
      for (const c of candidates) {
        iou[name][label(c)] = round(
          maskIoU(await segmenter.segment(image, candidateInput(image, c.side, c.shape, 64)), balanced),
          4,
        )
      }
      log(`levels: ${name} ${JSON.stringify(iou[name])}`)
    }
    const webResult = web ? await webRuntime(segmenter, reps, log) : null
    const nativeMs = timing['native-1024'].ms
    const results = candidates.map((c) => {
      const key = label(c)
      const minIoU = Math.min(...Object.values(iou).map((r) => r[key]))
      const speedup = round(nativeMs / timing[key].ms, 2)
      return { ...c, key, ms1mp: timing[key].ms, speedup, minIoU, ok: minIoU >= MIN_IOU && speedup >= MIN_SPEEDUP }
    })
    // When no candidate holds IoU ≥ 0.95 everywhere, the fallback pick: among those ≥ 2× faster,
    // the one that holds it on the most images, then the fastest (docs/quality.md says which failed).
    const passing = (key: string) => Object.values(iou).filter((r) => r[key] >= MIN_IOU).length
    const pick = results.filter((c) => c.ok).sort((a, b) => a.ms1mp - b.ms1mp)[0] ?? null
    const fallback =
      results
        .filter((c) => c.speedup >= MIN_SPEEDUP)
        .sort((a, b) => passing(b.key) - passing(a.key) || a.ms1mp - b.ms1mp)
        .map((c) => ({
          ...c,
          imagesPassing: passing(c.key),
          imagesFailing: Object.keys(iou).filter((n) => iou[n][c.key] < MIN_IOU),
        }))[0] ?? null
    return {
      rule: `fastest input with mask IoU ≥ ${MIN_IOU} against balanced (1024²) on every image and ≥ ${MIN_SPEEDUP}× faster at the model`,
      nativeMs1mp: nativeMs,
      timing,
      iou,
      candidates: results,
      pick,
      fallback,
      webRuntime: webResult,
    }
  } finally {
    await segmenter.close()
  }
}

/**
 * `fast`'s edge colour error (quality-synthetic.ts edgeColourError, 8-bit units, lower is better)
 * on the 4 MP and 12 MP composites: no decontamination, decontaminated at the 4 MP default working
 * size (before issue 44), and at fast's input's pixels (shipped); `fast`'s own mask each time.
 */
export async function fastEdgeColours(log = (m: string) => process.stderr.write(`${m}\n`)) {
  const segmenter = await createSegmenter()
  try {
    type Row = Record<'none' | 'workingSize4mp' | 'workingSizeInput' | 'ms4mp' | 'msInput', number>
    const rows: (Row & { composite: string })[] = []
    for (const c of await makeComposites(await fixtureMasks(segmenter))) {
      const { image } = await decodeImage(c.bytes)
      const { mask, working } = await levelAlpha(segmenter, image, 'fast')
      const error = async (colour: RgbImage) => edgeColourError(c, composeCutout(colour, mask).data)
      const t0 = performance.now()
      const before = await decontaminate(image, mask)
      const t1 = performance.now()
      const shipped = await decontaminate(image, mask, { maxWorkPixels: working?.pixels, workPhoto: working?.photo })
      const t2 = performance.now()
      const row = {
        composite: c.name,
        none: await error(image),
        workingSize4mp: await error(before),
        workingSizeInput: await error(shipped),
        ms4mp: round(t1 - t0, 0),
        msInput: round(t2 - t1, 0),
      }
      log(`fast colours: ${JSON.stringify(row)}`)
      rows.push(row)
    }
    const mean = (k: keyof Row) => round(rows.reduce((s, r) => s + r[k], 0) / rows.length, 2)
    return {
      metric: 'edge colour error: mean |F̂ − F| over the true edge band, α-weighted, 8-bit units (quality-synthetic.ts)',
      rows,
      mean: { none: mean('none'), workingSize4mp: mean('workingSize4mp'), workingSizeInput: mean('workingSizeInput') },
    }
  } finally {
    await segmenter.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      name: { type: 'string', default: 'latest' },
      reps: { type: 'string' },
      'big-reps': { type: 'string', default: '3' },
      full: { type: 'boolean', default: false },
      'no-web': { type: 'boolean', default: false },
      whole: { type: 'boolean', default: false },
      'fast-colours': { type: 'boolean', default: false },
    },
  })
  if (values['fast-colours']) {
    const report = { name: values.name, date: new Date().toISOString(), ...(await fastEdgeColours()) }
    mkdirSync(RESULTS_DIR, { recursive: true })
    const file = `${RESULTS_DIR}levels-fast-colours-${values.name}.json`
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
    process.stderr.write(`${JSON.stringify(report.mean)}\nwrote ${file}\n`)
    process.exit(0)
  }
  if (values.whole) {
    const whole = await timeWholeRemovals({ reps: Number(values.reps ?? 5), bigReps: Number(values['big-reps']) })
    const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...whole }
    mkdirSync(RESULTS_DIR, { recursive: true })
    const file = `${RESULTS_DIR}levels-whole-${values.name}.json`
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
    process.stderr.write(`wrote ${file}\n`)
    process.exit(0)
  }
  const result = await runLevelsBench({
    reps: Number(values.reps ?? 3),
    web: !values['no-web'],
    candidates: values.full ? FULL_SWEEP : CANDIDATES,
  })
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}levels-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stderr.write(`${JSON.stringify(result.candidates, null, 2)}\nwrote ${file}\n`)
}
