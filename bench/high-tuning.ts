/**
 * Tuning of `high`'s zoomed second look (issue 14), on the quality benchmark's composites:
 * `tsx bench/high-tuning.ts [--size 4mp|12mp] [--cache DIR] [--name NAME] [--timed]` →
 * bench/results/high-tuning[-NAME].json. Each crop's model mask is computed once (a memoising
 * segmenter; with `--cache`, kept on disk across runs too), so tile layouts and fusion settings are
 * compared on the same model outputs, and each variant's count of close-ups is its model runs. Every
 * variant is scored as `high` delivers it (close-ups, guided filter, decontaminated cutout), against
 * `balanced`. `--timed` instead times `high` (base run, close-ups, guided filter, decontamination)
 * with the grid and with the shipped layout, every run made → high-tuning-timed.json. Used to pick
 * EDGE_TILE_DEFAULTS; not part of `npm run bench`.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { composeCutout } from '../inference-server/src/imaging/compose.js'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { decontaminate, refineMask } from '../inference-server/src/imaging/refine.js'
import type { Mask, RgbImage } from '../inference-server/src/imaging/types.js'
import {
  EDGE_TILE_DEFAULTS,
  type EdgeTileOptions,
  planTiles,
  uncertainBand,
  widen,
  zoomEdges,
} from '../inference-server/src/levels/edge-tiles.js'
import { createSegmenter, type Segmenter } from '../inference-server/src/segmentation/index.js'
import { machineInfo, RESULTS_DIR, round } from './lib/util.js'
import {
  type Composite,
  edgeColourError,
  fixtureMasks,
  gradientMagnitude,
  makeComposites,
  type QUALITY_SIZES,
} from './quality-synthetic.js'

interface Scores {
  sad: number
  grad: number
  edgeColour?: number
}

/** SAD (thousands) and gradient error (thousands) of an 8-bit mask against the composite's truth. */
export function maskScores(c: Composite, mask: Mask): Scores {
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

/** bench/quality-synthetic.ts's edge colour error of the cutout `colour` and `mask` make. */
const edgeColour = (c: Composite, colour: RgbImage, mask: Mask): number =>
  edgeColourError(c, composeCutout(colour, mask).data)

/** What `high` delivers from a zoomed mask: guided filter, then the decontaminated cutout (remove.ts). */
async function highScores(c: Composite, image: RgbImage, zoomed: Mask): Promise<Scores> {
  const refined = await refineMask(image, zoomed)
  return { ...maskScores(c, refined), edgeColour: edgeColour(c, await decontaminate(image, refined), refined) }
}

type Memo = Segmenter & { runs: number; runMs: number[] }

/**
 * Remembers each crop's mask (keyed by a hash of its pixels and the input size; on disk under
 * `dir` when given) and counts the runs it really made, with their times.
 */
function memoising(inner: Segmenter, dir?: string): Memo {
  const cache = new Map<string, Mask>()
  if (dir) mkdirSync(dir, { recursive: true })
  const out: Memo = {
    version: inner.version,
    input: inner.input,
    runs: 0,
    runMs: [],
    async segment(image, size) {
      const hash = createHash('sha1').update(image.data).digest('hex')
      const key = `${image.width}x${image.height}-${size?.width ?? 0}x${size?.height ?? 0}-${hash}`
      const file = dir && `${dir}/${key}.bin`
      const hit = cache.get(key) ?? (file && existsSync(file) ? fromDisk(file, image) : undefined)
      if (hit) return hit
      out.runs++
      const t0 = performance.now()
      const mask = await inner.segment(image, size)
      out.runMs.push(performance.now() - t0)
      cache.set(key, mask)
      if (file) writeFileSync(file, mask.data)
      return mask
    },
    close: () => inner.close(),
  }
  return out
}

const fromDisk = (file: string, image: RgbImage): Mask => ({
  data: new Uint8Array(readFileSync(file)),
  width: image.width,
  height: image.height,
})

/**
 * The layout before (a grid, every tile run) first, then the cheaper plans compared with it. Each
 * variant spells out every layout setting, so it means the same whatever the defaults become.
 */
const COVER = { layout: 'cover', coverMaxBand: 0.2, probeTiles: 3 } as const
const VARIANTS: Record<string, Partial<EdgeTileOptions>> = {
  grid: { layout: 'grid', probeTiles: 0 },
  'grid-probe3': { layout: 'grid', probeTiles: 3 },
  'cover-w1-min0': { ...COVER, coverWeight: 1, minBandPixels: 0 },
  'cover-half-min0': { ...COVER, coverWeight: 0.5, minBandPixels: 0 },
  // EDGE_TILE_DEFAULTS
  'cover-half-min10k': { ...COVER, coverWeight: 0.5, minBandPixels: 10_000 },
}

/** Time to plan the layout alone (no model runs): what the cover's search adds to each request. */
function planMs(image: RgbImage, base: Mask, native: { width: number; height: number }, v: Partial<EdgeTileOptions>) {
  const o = { ...EDGE_TILE_DEFAULTS, ...v }
  const zoom = Math.max(image.width / native.width, image.height / native.height)
  const t0 = performance.now()
  const band = uncertainBand(base, o.bandLow, o.bandHigh)
  const near = widen(band, image.width, image.height, Math.round(o.marginModelPixels * zoom))
  planTiles(band, near, image.width, image.height, o)
  return round(performance.now() - t0, 0)
}

const log = (m: string) => process.stderr.write(`${m}\n`)

async function compare(segmenter: Memo, c: Composite): Promise<Record<string, unknown>> {
  const { image } = await decodeImage(c.bytes)
  const base = await segmenter.segment(image, segmenter.input.native)
  const row: Record<string, unknown> = {
    name: c.name,
    balanced: { ...maskScores(c, base), edgeColour: edgeColour(c, image, base) },
  }
  for (const [key, v] of Object.entries(VARIANTS)) {
    const before = segmenter.runs
    const zoomed = await zoomEdges(segmenter, image, base, segmenter.input.native, v)
    row[key] = {
      tiles: zoomed.tiles,
      planned: zoomed.planned,
      kept: zoomed.kept,
      newRuns: segmenter.runs - before,
      planMs: planMs(image, base, segmenter.input.native, v),
      zoom: maskScores(c, zoomed.mask),
      high: await highScores(c, image, zoomed.mask),
    }
    log(`${c.name} ${key} ${JSON.stringify(row[key])}`)
  }
  log(`${c.name} balanced ${JSON.stringify(row.balanced)}`)
  return row
}

/** Means per size of each variant's close-ups and `high` scores, and balanced's. */
function summarise(rows: Record<string, unknown>[], sizes: string[]) {
  const mean = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 3)
  const pick = (rs: Record<string, unknown>[], path: string[]) =>
    mean(rs.map((r) => path.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], r) as number))
  return Object.fromEntries(
    sizes.map((size) => {
      const rs = rows.filter((r) => (r.name as string).endsWith(`-${size}`))
      const balanced = { sad: pick(rs, ['balanced', 'sad']), grad: pick(rs, ['balanced', 'grad']) }
      const variants = Object.fromEntries(
        Object.keys(VARIANTS).map((k) => {
          const [sad, grad] = [pick(rs, [k, 'high', 'sad']), pick(rs, [k, 'high', 'grad'])]
          return [
            k,
            {
              tiles: pick(rs, [k, 'tiles']),
              sad,
              grad,
              edgeColour: pick(rs, [k, 'high', 'edgeColour']),
              sadLowerPct: round((100 * (balanced.sad - sad)) / balanced.sad, 1),
              gradLowerPct: round((100 * (balanced.grad - grad)) / balanced.grad, 1),
            },
          ]
        }),
      )
      return [size, { balanced: { ...balanced, edgeColour: pick(rs, ['balanced', 'edgeColour']) }, ...variants }]
    }),
  )
}

/**
 * `--timed`: the real cost of `high`'s mask with the grid against the shipped layout, every model
 * run made (no memo), the two interleaved on each composite so load on a shared machine hits both.
 */
async function timed(model: Segmenter, c: Composite): Promise<Record<string, unknown>> {
  const { image } = await decodeImage(c.bytes)
  const row: Record<string, unknown> = { name: c.name }
  for (const [key, v] of [
    ['grid', VARIANTS.grid],
    ['default', {}],
  ] as const) {
    const t0 = performance.now()
    const base = await model.segment(image, model.input.native)
    const zoomed = await zoomEdges(model, image, base, model.input.native, v)
    const refined = await refineMask(image, zoomed.mask)
    await decontaminate(image, refined)
    row[key] = { modelRuns: 1 + zoomed.tiles, ms: round(performance.now() - t0, 0) }
  }
  log(JSON.stringify(row))
  return row
}

const { values } = parseArgs({
  options: {
    size: { type: 'string' },
    cache: { type: 'string' },
    name: { type: 'string' },
    timed: { type: 'boolean', default: false },
  },
})
const sizes = values.size ? [values.size as keyof typeof QUALITY_SIZES] : (['4mp', '12mp'] as const)
const model = await createSegmenter()
const segmenter = memoising(model, values.cache)
const composites = await makeComposites(await fixtureMasks(segmenter), [...sizes])
const rows: Record<string, unknown>[] = []
for (const c of composites) rows.push(await (values.timed ? timed(model, c) : compare(segmenter, c)))
await model.close()
const runMs = [...segmenter.runMs].sort((a, b) => a - b)
const summary = values.timed
  ? {}
  : {
      meanBySize: summarise(rows, [...sizes]),
      modelRuns: segmenter.runs,
      medianModelRunMs: runMs.length ? round(runMs[runMs.length >> 1], 0) : null,
    }
mkdirSync(RESULTS_DIR, { recursive: true })
const suffix = [values.timed ? 'timed' : '', values.name ?? ''].filter(Boolean).join('-')
const file = `${RESULTS_DIR}high-tuning${suffix ? `-${suffix}` : ''}.json`
const report = { date: new Date().toISOString(), machine: machineInfo(), variants: VARIANTS, ...summary, rows }
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
log(`${JSON.stringify(summary, null, 2)}\nwrote ${file}`)
