/**
 * The GROUND-TRUTH quality benchmark (issues 22, 31; part of `npm run bench`, or alone:
 * `tsx bench/quality-gt.ts [--only am0] [--name latest] [--timing 3]`): every quality level on the
 * 48 real pairs of `../shared/gt/` (alphamatting.com, DAVIS, GrabCut, COCO; their README), each
 * group scored as its README says (bench/lib/gt-score.ts), per pair, per group and overall.
 *
 * It cannot flatter us: every choice made by measuring on these photos (`high`'s views, evidence
 * rule, thresholds, refinement: bench/lib/high-candidates.ts) is made again leave-one-group-out
 * (bench/lib/cv.ts) and each pair is also scored with the choice made without its group. That
 * cross-validated `high` is the number the docs lead with; the in-sample one stands beside it.
 *
 * The model's masks are cached on disk (bench/.cache/, ignored by git), so the levels' real code
 * (levelAlpha: the same function the server runs) is evaluated over the cached masks; the time
 * ratios come from uncached runs of the real pipeline (removeBackground) on a few 0.5 MP photos in
 * the same run. Writes bench/results/quality-gt-<name>.json (numbers only), the charts
 * docs/quality/gt-*.svg, and a contact sheet of the pairs where the levels differ most to
 * bench/results/sheets/ (ignored by git: the photos and their truth must never be committed).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import type { RgbImage } from '../inference-server/src/imaging/types.js'
import { maskConfidence } from '../inference-server/src/levels/confidence.js'
import { HIGH_DEFAULTS } from '../inference-server/src/levels/index.js'
import type { Quality } from '../inference-server/src/options.js'
import { levelAlpha } from '../inference-server/src/remove.js'
import type { Segmenter } from '../inference-server/src/segmentation/index.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import { cachedSegmenter } from './lib/cached-segmenter.js'
import { clearlyWorse, type CvPair, crossValidate } from './lib/cv.js'
import { sharp } from './lib/deps.js'
import { type PairRow, summary, targets } from './lib/gt-report.js'
import { type PairTruth, pairTruth, type QuickScores, quickScore, score } from './lib/gt-score.js'
import { sheetRow, writeSheet } from './lib/gt-sheet.js'
import { gtCharts } from './lib/gt-charts.js'
import { highCandidates, highEvaluator } from './lib/high-candidates.js'
import { timeLevels } from './lib/gt-timing.js'
import { confidenceReport } from './lib/confidence-cv.js'
import { machineInfo, RESULTS_DIR, ROOT } from './lib/util.js'

/** Read at run time, never copied: the repository must not hold these photos (their README). GT_DIR
 * overrides it (a git worktree sits elsewhere than ../). */
export const GT_DIR = process.env.GT_DIR ?? `${ROOT}../shared/gt/`
const SHEETS_DIR = `${RESULTS_DIR}sheets/`
/** `high`'s candidate view sets: each within issue 31's time budget (≤ 1.4 native runs more than `balanced`). */
const VIEW_SETS = [['mirror'], ['small'], ['mirror', 'small']] as const

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
  if (!existsSync(GT_DIR)) throw new Error(`no ground truth at ${GT_DIR} (see issue 22; GT_DIR sets it)`)
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

type Log = (m: string) => void

/** Pass 1: every candidate's cheap scores on one photo, and a check that the composition is levelAlpha's. */
async function scoreCandidates(
  model: Segmenter,
  image: RgbImage,
  truth: PairTruth,
  candidates: ReturnType<typeof highCandidates>,
) {
  const highAlpha = highEvaluator(model, image)
  const quick: Record<string, QuickScores> = {}
  const disputed: Record<string, number> = {}
  for (const [key, options] of Object.entries(candidates)) {
    const r = await highAlpha(options)
    quick[key] = quickScore(truth, r.mask.data)
    disputed[key] = r.changed
  }
  const shipped = await levelAlpha(model, image, 'high')
  const composed = await highAlpha(HIGH_DEFAULTS)
  if (Buffer.compare(Buffer.from(shipped.mask.data), Buffer.from(composed.mask.data)) !== 0)
    throw new Error("the benchmark's composition of high differs from levelAlpha's: fix high-candidates.ts")
  return { quick }
}

/**
 * Runs the benchmark and returns the report (per pair, per group, overall, cross-validated).
 * @example const report = await runGtBench({ only: 'davis' })
 */
export async function runGtBench({
  only,
  timing = 3,
  log = (m: string) => process.stderr.write(`${m}\n`),
}: {
  only?: string
  timing?: number
  log?: Log
} = {}) {
  const photos = await gtPhotos(only)
  // SEGMENTATION_MODEL[_<LEVEL>] / SEGMENTATION_PROFILE[_<LEVEL>] as the server reads them (issue 25).
  const live = await createLevelSegmenters(levelModelsFromEnv(process.env))
  const model = cachedSegmenter(live)
  const candidates = highCandidates(VIEW_SETS.map((v) => [...v]))
  const keys = Object.keys(candidates)
  const reference = keys[0] // balanced's own mask, unrefined
  const rows: PairRow[] = []
  const cvPairs: CvPair[] = []
  const quickByPair: Record<string, Record<string, QuickScores>> = {}
  const confidences: Record<string, Record<string, number>> = {}
  try {
    // Pass 1: the fixed levels in full, every high candidate cheaply.
    for (const p of photos) {
      const { image } = await decodeImage(p.bytes)
      const truth = pairTruth(p.name, p.alpha, p.width, p.height)
      const row: PairRow = { name: p.name, group: truth.group, width: p.width, height: p.height, scores: {} }
      confidences[p.name] = {}
      for (const q of ['fast', 'balanced', 'high'] as Quality[]) {
        const level = await levelAlpha(model, image, q)
        row.scores[q] = score(truth, level.mask.data)
        // What the server reports on the removal's done frame (removeBackground).
        confidences[p.name][q] = maskConfidence(level.mask.data, level.arbitration?.disputed ?? 0)
      }
      const { quick } = await scoreCandidates(model, image, truth, candidates)
      quickByPair[p.name] = quick
      cvPairs.push({
        name: p.name,
        group: truth.group,
        loss: Object.fromEntries(keys.map((k) => [k, quick[k].sad ?? null])),
      })
      rows.push(row)
      log(
        `${p.name}: SAD fast ${row.scores.fast.whole?.sad} balanced ${row.scores.balanced.whole?.sad} high ${row.scores.high.whole?.sad}; IoU ${row.scores.balanced.iou} → ${row.scores.high.iou}`,
      )
    }
    const cv = crossValidate(cvPairs, keys, reference, clearlyWorse)
    log(`cross-validation: in-sample ${cv.inSample}; folds ${JSON.stringify(cv.folds)}`)
    // Pass 2: full metrics for the cross-validated choice (per pair, its fold's) and the in-sample one.
    for (const p of photos) {
      const row = rows.find((r) => r.name === p.name) as PairRow
      const { image } = await decodeImage(p.bytes)
      const truth = pairTruth(p.name, p.alpha, p.width, p.height)
      const highAlpha = highEvaluator(model, image)
      row.scores.highCv = score(truth, (await highAlpha(candidates[cv.outOfSample[p.name]])).mask.data)
      row.scores.highInSample = score(truth, (await highAlpha(candidates[cv.inSample])).mask.data)
    }
    const timings = timing ? await timeLevels(live, photos, timing, log) : null
    const methods = ['fast', 'balanced', 'high', 'highCv', 'highInSample']
    return {
      models: { high: live.version },
      cache: model.stats,
      highDefaults: HIGH_DEFAULTS,
      candidates: keys.length,
      crossValidation: cv,
      summary: summary(rows, methods),
      targets: {
        highCv: targets(rows, 'highCv'),
        highInSample: targets(rows, 'highInSample'),
        high: targets(rows, 'high'),
      },
      confidence: confidenceReport(rows, confidences),
      timings,
      pairs: rows,
      candidateMeans: candidateMeans(cvPairs, quickByPair, keys),
    }
  } finally {
    await model.close()
  }
}

/** Every candidate's mean SAD (pairs with SAD) and mean IoU, in sample: what the grid looked like. */
function candidateMeans(pairs: CvPair[], quick: Record<string, Record<string, QuickScores>>, keys: string[]) {
  return Object.fromEntries(
    keys.map((k) => {
      const sads = pairs.map((p) => p.loss[k]).filter((v): v is number => v !== null)
      const ious = pairs.map((p) => quick[p.name][k].iou)
      const avg = (xs: number[]) => Math.round((1000 * xs.reduce((a, b) => a + b, 0)) / xs.length) / 1000
      return [
        k,
        {
          sad: avg(sads),
          iou: avg(ious),
          worse: pairs.filter((p) => clearlyWorse(p.loss[k] ?? 0, p.loss[keys[0]] ?? 0)).length,
        },
      ]
    }),
  )
}

/** The pairs where the levels differ most (by SAD, or IoU on COCO), for the contact sheet. */
async function writeContactSheet(report: Awaited<ReturnType<typeof runGtBench>>, name: string, only?: string) {
  const photos = await gtPhotos(only)
  const live = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)), { offline: true })
  const spread = (r: PairRow) => {
    const v = ['fast', 'balanced', 'highCv'].map((m) => r.scores[m].whole?.sad ?? 100 * (1 - r.scores[m].iou))
    return Math.max(...v) - Math.min(...v)
  }
  const worst = [...report.pairs].sort((a, b) => spread(b) - spread(a)).slice(0, 12)
  const rows = []
  try {
    for (const r of worst) {
      const p = photos.find((x) => x.name === r.name) as GtPhoto
      const { image } = await decodeImage(p.bytes)
      const highAlpha = highEvaluator(live, image)
      const alphas = [
        (await levelAlpha(live, image, 'fast')).mask.data,
        (await levelAlpha(live, image, 'balanced')).mask.data,
        (await highAlpha(highCandidates(VIEW_SETS.map((v) => [...v]))[report.crossValidation.outOfSample[r.name]])).mask
          .data,
      ]
      rows.push(
        await sheetRow(
          p.bytes,
          Uint8Array.from(p.alpha, (a) => Math.round(a * 255)),
          alphas,
          p.width,
          p.height,
        ),
      )
    }
  } finally {
    await live.close()
  }
  mkdirSync(SHEETS_DIR, { recursive: true })
  const file = `${SHEETS_DIR}quality-gt-${name}.jpg`
  await writeSheet(rows, file)
  return {
    file,
    rows: worst.map((r) => r.name),
    columns: ['photo', 'truth', 'fast', 'balanced', 'high (cross-validated)'],
  }
}

/** Runs the benchmark and writes its JSON, charts (full runs only) and contact sheet. */
export async function writeGtReport(
  name: string,
  { only, chart = true, timing = 3 }: { only?: string; chart?: boolean; timing?: number } = {},
) {
  const result = await runGtBench({ only, timing })
  const sheet = await writeContactSheet(result, name, only)
  const report = {
    name,
    date: new Date().toISOString(),
    machine: machineInfo(),
    truth:
      'real photos with ground truth made by others (../shared/gt: alphamatting.com, DAVIS, GrabCut, COCO); never committed',
    sheet: { rows: sheet.rows, columns: sheet.columns },
    ...result,
  }
  const file = `${RESULTS_DIR}quality-gt-${name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  if (chart && !only) gtCharts(report)
  process.stderr.write(
    `${JSON.stringify({ summary: result.summary, targets: result.targets, timings: result.timings }, null, 2)}\ncontact sheet (not committed): ${sheet.file}\nwrote ${file}\n`,
  )
  return report
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      name: { type: 'string', default: 'latest' },
      only: { type: 'string' },
      timing: { type: 'string', default: '3' },
      'no-chart': { type: 'boolean', default: false },
    },
  })
  await writeGtReport(values.name, { only: values.only, chart: !values['no-chart'], timing: Number(values.timing) })
}
