/**
 * The input-size sweep that picks `fast`'s size (issue 14; part of `npm run bench`, or alone:
 * `tsx bench/levels.ts`). For each candidate input, on the size-agnostic model:
 * - time at the model: the segmenter (model thread, 2 threads, tensor in and mask out) on the 1 MP
 *   synthetic JPEG, median of `reps`, interleaved with the native 1024² so load falls alike;
 * - mask IoU (α ≥ 0.5) against `balanced` (1024²) on the fixture photos and the quality benchmark's
 *   4 MP and 12 MP composites.
 * The pick: the fastest candidate with IoU ≥ 0.95 on every image and ≥ 2× faster than 1024².
 * Writes bench/results/levels-<name>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import type { Mask, RgbImage } from '../inference-server/src/imaging/types.js'
import { type FastShape, inputFor } from '../inference-server/src/levels/sizes.js'
import { createSegmenter, type InputSize, type Segmenter } from '../inference-server/src/segmentation/index.js'
import { FIXTURE_PHOTOS, fixturePhoto, syntheticJpeg } from './lib/images.js'
import { machineInfo, median, RESULTS_DIR, round } from './lib/util.js'
import { fixtureMasks, makeComposites } from './quality.js'

export const CANDIDATES: { side: number; shape: FastShape }[] = [
  { side: 512, shape: 'square' },
  { side: 576, shape: 'square' },
  { side: 640, shape: 'square' },
  { side: 704, shape: 'square' },
  { side: 768, shape: 'square' },
  { side: 576, shape: 'aspect' },
  { side: 640, shape: 'aspect' },
  { side: 704, shape: 'aspect' },
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

const label = (c: { side: number; shape: FastShape }) => `${c.shape}-${c.side}`

async function images(): Promise<{ name: string; image: RgbImage }[]> {
  const out: { name: string; image: RgbImage }[] = []
  for (const name of FIXTURE_PHOTOS) {
    out.push({ name, image: (await decodeImage((await fixturePhoto(name)).bytes)).image })
  }
  return out
}

/** Model time per candidate on the 1 MP JPEG, interleaved with 1024² (ms, medians). */
async function timeAtModel(segmenter: Segmenter, reps: number, log: (m: string) => void) {
  const { image } = await decodeImage((await syntheticJpeg('1mp')).bytes)
  const inputs = [{ key: 'native-1024', size: NATIVE }].concat(
    CANDIDATES.map((c) => ({ key: label(c), size: inputFor(image, c.side, c.shape, 64) })),
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

export async function runLevelsBench({ reps = 3, log = (m: string) => process.stderr.write(`${m}\n`) } = {}) {
  const segmenter = await createSegmenter()
  try {
    const timing = await timeAtModel(segmenter, reps, log)
    const composites = await makeComposites(await fixtureMasks(segmenter))
    const set = await images()
    for (const c of composites) set.push({ name: c.name, image: (await decodeImage(c.bytes)).image })
    const iou: Record<string, Record<string, number>> = {}
    for (const { name, image } of set) {
      const balanced = await segmenter.segment(image, NATIVE)
      iou[name] = {}
      for (const c of CANDIDATES) {
        iou[name][label(c)] = round(
          maskIoU(await segmenter.segment(image, inputFor(image, c.side, c.shape, 64)), balanced),
          4,
        )
      }
      log(`levels: ${name} ${JSON.stringify(iou[name])}`)
    }
    const nativeMs = timing['native-1024'].ms
    const candidates = CANDIDATES.map((c) => {
      const key = label(c)
      const minIoU = Math.min(...Object.values(iou).map((r) => r[key]))
      const speedup = round(nativeMs / timing[key].ms, 2)
      return { ...c, key, ms1mp: timing[key].ms, speedup, minIoU, ok: minIoU >= MIN_IOU && speedup >= MIN_SPEEDUP }
    })
    // When no candidate holds IoU ≥ 0.95 everywhere, the fallback pick: among those ≥ 2× faster,
    // the one that holds it on the most images, then the fastest (docs/quality.md says which failed).
    const passing = (key: string) => Object.values(iou).filter((r) => r[key] >= MIN_IOU).length
    const pick = candidates.filter((c) => c.ok).sort((a, b) => a.ms1mp - b.ms1mp)[0] ?? null
    const fallback =
      candidates
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
      candidates,
      pick,
      fallback,
    }
  } finally {
    await segmenter.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { name: { type: 'string', default: 'latest' }, reps: { type: 'string', default: '3' } },
  })
  const result = await runLevelsBench({ reps: Number(values.reps) })
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}levels-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stderr.write(`${JSON.stringify(result.candidates, null, 2)}\nwrote ${file}\n`)
}
