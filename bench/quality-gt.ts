/**
 * The GROUND-TRUTH quality benchmark (issue 22; part of `npm run bench`, or alone:
 * `tsx bench/quality-gt.ts [--only am0] [--levels fast,balanced] [--name latest]`, or
 * `npm run bench -- --gt-only`; SEGMENTATION_MODEL and the other model settings pick the model,
 * docs/models.md): every quality
 * level on the real photos of `../shared/gt/` (alphamatting.com and DAVIS; their README) through
 * the inference server's real pipeline (removeBackground, the real model, in-process), scored
 * against their true alpha with the matting metrics (bench/lib/matting-metrics.ts) over the whole
 * image and the truth's edge band, with the time per photo.
 * Writes bench/results/quality-gt-<name>.json (numbers only), the chart docs/quality/gt-sad.svg, and
 * a contact sheet (photo, truth, each level) to bench/results/sheets/ — ignored by git, because the
 * photos and their truth must never be committed (docs/decisions.md).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { removeBackground } from '../inference-server/src/remove.js'
import type { Segmenter } from '../inference-server/src/segmentation/index.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import type { Quality } from '../inference-server/src/options.js'
import { sharp } from './lib/deps.js'
import { edgeBand, matting, type MattingScores } from './lib/matting-metrics.js'
import { barChart } from './lib/svg.js'
import { machineInfo, RESULTS_DIR, ROOT, round } from './lib/util.js'

/** Read at run time, never copied: the repository must not hold these photos (their README). */
export const GT_DIR = `${ROOT}../shared/gt/`
const SHEETS_DIR = `${RESULTS_DIR}sheets/`
const CHART = fileURLToPath(new URL('../docs/quality/gt-sad.svg', import.meta.url))
const LEVELS: Quality[] = ['fast', 'balanced', 'high']

export interface GtPhoto {
  name: string
  bytes: Uint8Array
  width: number
  height: number
  /** True alpha, 0..1 (channel 0 of the truth PNG). */
  alpha: Float32Array
}

/** The photos of GT_DIR whose name contains `only` (all by default), with their truth. */
export async function gtPhotos(only?: string): Promise<GtPhoto[]> {
  if (!existsSync(GT_DIR)) throw new Error(`no ground truth at ${GT_DIR} (see issue 22)`)
  const files = readdirSync(GT_DIR).filter((f) => /\.(png|jpg)$/.test(f) && !f.includes('.gt.'))
  const out: GtPhoto[] = []
  for (const file of files.sort()) {
    const name = file.replace(/\.(png|jpg)$/, '')
    if (only && !name.includes(only)) continue
    const { data, info } = await sharp(`${GT_DIR}${name}.gt.png`)
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true })
    const alpha = new Float32Array(data.length)
    for (let i = 0; i < data.length; i++) alpha[i] = data[i] / 255
    const bytes = new Uint8Array(await readFile(`${GT_DIR}${file}`))
    out.push({ name, bytes, width: info.width, height: info.height, alpha })
  }
  return out
}

export interface LevelScores {
  whole: MattingScores
  band: MattingScores
  /** Whole cutout time (decode, model runs, refinement, decontamination, encode) and the model part. */
  ms: number
  segmentMs: number
  modelRuns: number
}

/** The edge band's half-width: about 1 % of the long side (11 px on the 854×480 DAVIS frames). */
const bandRadius = (p: GtPhoto) => Math.max(5, Math.round(Math.max(p.width, p.height) / 80))

/** One level on one photo: its cutout's alpha (raw, no feather: what the level makes) scored. */
async function scoreLevel(
  model: Segmenter,
  p: GtPhoto,
  quality: Quality,
  band: Uint8Array,
): Promise<{ scores: LevelScores; alpha8: Uint8Array }> {
  const r = await removeBackground(model, p.bytes, { quality, alpha: { mode: 'raw', feather: 0 }, output: 'cutout' })
  const alpha8 = new Uint8Array(await sharp(r.png).ensureAlpha().extractChannel(3).raw().toBuffer())
  const est = new Float32Array(alpha8.length)
  for (let i = 0; i < est.length; i++) est[i] = alpha8[i] / 255
  const t = r.timings
  return {
    scores: {
      whole: matting(est, p.alpha, p.width, p.height),
      band: matting(est, p.alpha, p.width, p.height, band),
      ms: round(t.decode + t.segment + t.alpha + t.encode, 0),
      segmentMs: round(t.segment, 0),
      modelRuns: r.modelRuns,
    },
    alpha8,
  }
}

/** A row of the contact sheet: photo, truth, then each level's alpha, `h` px tall. */
async function sheetRow(p: GtPhoto, alphas: Uint8Array[], h: number): Promise<{ buf: Buffer; w: number }> {
  const w = Math.round((p.width * h) / p.height)
  /** A w×h RGB tile (greyscale planes replicated: sharp keeps a 1-channel raw input at 1 channel). */
  const tile = async (input: Parameters<typeof sharp>[0], raw?: { width: number; height: number; channels: 1 }) => {
    const { data, info } = await sharp(input as Buffer, raw ? { raw } : undefined)
      .resize(w, h, { fit: 'fill' })
      .raw()
      .toBuffer({ resolveWithObject: true })
    const rgb = Buffer.alloc(w * h * 3)
    for (let i = 0; i < w * h; i++)
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = data[i * info.channels + (info.channels >= 3 ? c : 0)]
    return rgb
  }
  const truth8 = Uint8Array.from(p.alpha, (a) => Math.round(a * 255))
  const tiles = [
    await tile(p.bytes),
    await tile(truth8, { width: p.width, height: p.height, channels: 1 }),
    ...(await Promise.all(alphas.map((a) => tile(a, { width: p.width, height: p.height, channels: 1 })))),
  ]
  const buf = await sharp({ create: { width: w * tiles.length, height: h, channels: 3, background: '#fff' } })
    .composite(tiles.map((t, k) => ({ input: t, raw: { width: w, height: h, channels: 3 }, left: k * w, top: 0 })))
    .removeAlpha() // composite adds an alpha channel
    .raw()
    .toBuffer()
  return { buf, w: w * tiles.length }
}

const mean = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length, 3) : null)

/**
 * Runs every level on every photo and returns the report (per photo, means, the issue's targets).
 * @example const report = await runGtBench({ only: 'davis' })
 */
export async function runGtBench({
  only,
  levels = LEVELS,
  sheet = true,
  log = (m: string) => process.stderr.write(`${m}\n`),
}: {
  only?: string
  levels?: Quality[]
  sheet?: boolean
  log?: (m: string) => void
} = {}) {
  const photos = await gtPhotos(only)
  // SEGMENTATION_MODEL[_<LEVEL>] / SEGMENTATION_PROFILE[_<LEVEL>] as the server reads them (issue 25).
  const model = await createLevelSegmenters(levelModelsFromEnv(process.env))
  const models = Object.fromEntries(levels.map((q) => [q, (model.forLevel?.(q) ?? model).version]))
  log(`models: ${JSON.stringify(models)}`)
  const rows: Array<{ name: string; width: number; height: number } & Partial<Record<Quality, LevelScores>>> = []
  const sheetRows: Array<{ buf: Buffer; w: number }> = []
  try {
    // One untimed run first: the first session.run pays for the session's warm-up.
    if (photos[0])
      await removeBackground(model, photos[0].bytes, {
        quality: 'balanced',
        alpha: { mode: 'raw', feather: 0 },
        output: 'mask',
      })
    for (const p of photos) {
      const band = edgeBand(p.alpha, p.width, p.height, bandRadius(p))
      const row: (typeof rows)[number] = { name: p.name, width: p.width, height: p.height }
      const alphas: Uint8Array[] = []
      for (const q of levels) {
        const { scores, alpha8 } = await scoreLevel(model, p, q, band)
        row[q] = scores
        alphas.push(alpha8)
      }
      if (sheet) sheetRows.push(await sheetRow(p, alphas, 160))
      log(`${p.name}: ${levels.map((q) => `${q} SAD ${row[q]?.whole.sad} (${row[q]?.ms} ms)`).join(', ')}`)
      rows.push(row)
    }
  } finally {
    await model.close()
  }
  const avg = (q: Quality, pick: (s: LevelScores) => number) =>
    mean(
      rows
        .map((r) => r[q])
        .filter((s): s is LevelScores => !!s)
        .map(pick),
    )
  const means = Object.fromEntries(
    levels.map((q) => [
      q,
      {
        sad: avg(q, (s) => s.whole.sad),
        mse: avg(q, (s) => s.whole.mse),
        grad: avg(q, (s) => s.whole.grad),
        conn: avg(q, (s) => s.whole.conn),
        bandSad: avg(q, (s) => s.band.sad),
        bandMse: avg(q, (s) => s.band.mse),
        bandGrad: avg(q, (s) => s.band.grad),
        bandConn: avg(q, (s) => s.band.conn),
        ms: avg(q, (s) => s.ms),
        segmentMs: avg(q, (s) => s.segmentMs),
      },
    ]),
  ) as Partial<Record<Quality, Record<string, number | null>>>
  return { models, photos: rows, means, targets: targets(rows, means), sheetRows }
}

/** Issue 22's "done when", computed from one run. */
function targets(
  rows: Array<Partial<Record<Quality, LevelScores>> & { name: string }>,
  means: Partial<Record<Quality, Record<string, number | null>>>,
) {
  const [b, h, f] = [means.balanced, means.high, means.fast]
  if (!b) return null
  const out: Record<string, unknown> = {}
  if (h) {
    const worse = rows
      .filter((r) => r.high && r.balanced)
      .map((r) => ({ name: r.name, high: r.high!.whole.sad, balanced: r.balanced!.whole.sad }))
      .filter((r) => r.high - r.balanced > Math.max(0.05 * r.balanced, 0.5))
    out.high = {
      sadLowerPct: round((100 * (b.sad! - h.sad!)) / b.sad!, 1),
      sadOk: h.sad! <= 0.8 * b.sad!,
      photosWorseThanAllowed: worse,
      gradLower: h.grad! < b.grad!,
      timeRatioToBalanced: round(h.ms! / b.ms!, 2),
    }
  }
  if (f) {
    out.fast = {
      modelSpeedup: round(b.segmentMs! / f.segmentMs!, 2),
      sadRatioToBalanced: round(f.sad! / b.sad!, 2),
      ok: b.segmentMs! / f.segmentMs! >= 2 && f.sad! <= 1.5 * b.sad!,
    }
  }
  return out
}

/** The committed chart: SAD per photo and level (numbers only, no pixels of the photos). */
export function gtChart(report: { date: string; photos: Array<Record<string, unknown>> }, levels = LEVELS): string {
  const colours: Record<Quality, string> = { fast: '#8ecae6', balanced: '#219ebc', high: '#fb8500' }
  return barChart({
    title: 'SAD against the true alpha (thousands), per real photo; lower is better',
    unit: '',
    subtitle: `../shared/gt (alphamatting.com, DAVIS) · ${report.date.slice(0, 10)}`,
    series: levels.map((q) => ({ label: q, color: colours[q] })),
    groups: report.photos.map((r) => ({
      // "am01 flower", "davis dog": short enough to sit under a group of three bars.
      label: String(r.name).split('-').slice(0, 2).join(' ').slice(0, 10),
      values: levels.map((q) => (r[q] as LevelScores | undefined)?.whole.sad ?? null),
    })),
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      name: { type: 'string', default: 'latest' },
      only: { type: 'string' },
      levels: { type: 'string' },
      'no-chart': { type: 'boolean', default: false },
    },
  })
  const levels = values.levels ? (values.levels.split(',') as Quality[]) : LEVELS
  await writeGtReport(values.name, { only: values.only, levels, chart: !values['no-chart'] && !values.only })
}

/** Runs the benchmark and writes its JSON, chart (full runs only) and contact sheet. */
export async function writeGtReport(
  name: string,
  { only, levels = LEVELS, chart = true }: { only?: string; levels?: Quality[]; chart?: boolean } = {},
) {
  const { sheetRows, ...result } = await runGtBench({ only, levels })
  const report = {
    name,
    date: new Date().toISOString(),
    machine: machineInfo(),
    truth: 'real photos with measured ground truth (../shared/gt: alphamatting.com, DAVIS); never committed',
    ...result,
  }
  mkdirSync(SHEETS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}quality-gt-${name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  if (chart) writeFileSync(CHART, gtChart(report, levels))
  if (sheetRows.length) {
    const width = Math.max(...sheetRows.map((r) => r.w))
    const h = 160
    const sheetFile = `${SHEETS_DIR}quality-gt-${name}.jpg`
    await sharp({ create: { width, height: h * sheetRows.length, channels: 3, background: '#fff' } })
      .composite(
        sheetRows.map((r, k) => ({
          input: r.buf,
          raw: { width: r.w, height: h, channels: 3 as const },
          left: 0,
          top: k * h,
        })),
      )
      .jpeg({ quality: 85 })
      .toFile(sheetFile)
    process.stderr.write(`contact sheet (not committed): ${sheetFile}\n`)
  }
  process.stderr.write(`${JSON.stringify({ means: result.means, targets: result.targets }, null, 2)}\nwrote ${file}\n`)
  return report
}
