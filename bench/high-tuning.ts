/**
 * Tuning of `high`'s zoomed second look (issue 14), on the quality benchmark's 12 MP composites:
 * `tsx bench/high-tuning.ts` → bench/results/high-tuning.json. Each tile's model mask is computed
 * once per tile size (a memoising segmenter), so the fusion settings and the guided filter after it
 * are compared on the same model outputs. Used to pick EDGE_TILE_DEFAULTS; not part of `npm run bench`.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { refineMask } from '../inference-server/src/imaging/refine.js'
import type { Mask } from '../inference-server/src/imaging/types.js'
import { type EdgeTileOptions, zoomEdges } from '../inference-server/src/levels/edge-tiles.js'
import { createSegmenter, type Segmenter } from '../inference-server/src/segmentation/index.js'
import { machineInfo, RESULTS_DIR, round } from './lib/util.js'
import { type Composite, fixtureMasks, gradientMagnitude, makeComposites } from './quality.js'

/** SAD (thousands) and gradient error (thousands) of an 8-bit mask against the composite's truth. */
export function maskScores(c: Composite, mask: Mask): { sad: number; grad: number } {
  const est = new Float32Array(mask.data.length)
  let sad = 0
  for (let i = 0; i < est.length; i++) {
    est[i] = mask.data[i] / 255
    sad += Math.abs(est[i] - c.alpha[i])
  }
  const gt = gradientMagnitude(c.alpha, c.width, c.height)
  const ge = gradientMagnitude(est, c.width, c.height)
  let grad = 0
  for (let i = 0; i < gt.length; i++) grad += (gt[i] - ge[i]) ** 2
  return { sad: round(sad / 1000, 2), grad: round(grad / 1000, 3) }
}

/** Remembers each crop's mask (keyed by size and a sample of its pixels) and counts real runs. */
function memoising(inner: Segmenter): Segmenter & { runs: number } {
  const cache = new Map<string, Mask>()
  const out = {
    version: inner.version,
    input: inner.input,
    runs: 0,
    async segment(image: Parameters<Segmenter['segment']>[0], size: Parameters<Segmenter['segment']>[1]) {
      let h = 0
      for (let i = 0; i < image.data.length; i += 4099) h = (h * 31 + image.data[i]) | 0
      const key = `${image.width}x${image.height}:${h}:${size?.width}`
      const hit = cache.get(key)
      if (hit) return hit
      out.runs++
      const mask = await inner.segment(image, size)
      cache.set(key, mask)
      return mask
    },
    close: () => inner.close(),
  }
  return out
}

const VARIANTS: Partial<EdgeTileOptions>[] = [
  { tile: 1024 },
  { tile: 1024, maxDisagreement: 1 },
  { tile: 1024, marginModelPixels: 0.75 },
  { tile: 1024, marginModelPixels: 3 },
  { tile: 1536 },
  { tile: 2048 },
]

const log = (m: string) => process.stderr.write(`${m}\n`)
const model = await createSegmenter()
const segmenter = memoising(model)
const composites = await makeComposites(await fixtureMasks(model), ['12mp'])
const rows: Record<string, unknown>[] = []
for (const c of composites) {
  const { image } = await decodeImage(c.bytes)
  const base = await segmenter.segment(image, segmenter.input.native)
  const row: Record<string, unknown> = { name: c.name, balanced: maskScores(c, base) }
  row.balancedGuided = maskScores(c, await refineMask(image, base))
  for (const v of VARIANTS) {
    const before = segmenter.runs
    const t0 = performance.now()
    const zoomed = await zoomEdges(segmenter, image, base, segmenter.input.native, v)
    const ms = performance.now() - t0
    const key = JSON.stringify(v)
    row[key] = {
      tiles: zoomed.tiles,
      kept: zoomed.kept,
      newRuns: segmenter.runs - before,
      msWithNewRuns: round(ms, 0),
      zoom: maskScores(c, zoomed.mask),
      zoomGuided: maskScores(c, await refineMask(image, zoomed.mask)),
    }
    log(`${c.name} ${key} ${JSON.stringify(row[key])}`)
  }
  log(`${c.name} balanced ${JSON.stringify(row.balanced)} guided ${JSON.stringify(row.balancedGuided)}`)
  rows.push(row)
}
await model.close()
mkdirSync(RESULTS_DIR, { recursive: true })
const file = `${RESULTS_DIR}high-tuning.json`
writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), machine: machineInfo(), rows }, null, 2)}\n`)
log(`wrote ${file}`)
