/**
 * The clicks benchmark's protocol and scoring (bench/clicks.ts; issue 44 item 1), shared by its
 * two modes (bench/lib/click-modes.ts): from a start mask, one simulated click at a time
 * (bench/lib/clicker.ts), each a refinement with one new point, and the IoU after each click
 * (prediction ≥ 128 against truth ≥ 0.5, GrabCut's 128 band left out: gt-score.ts's quickScore).
 * Scores as the interactive-segmentation papers do (RITM, SimpleClick, SAM): IoU after k clicks,
 * NoC@85 and NoC@90 (clicks until IoU reaches 85 / 90 %), and, for our goal that no click makes
 * the mask worse, each pair's largest drop of IoU in one click.
 */
import type { RefinementPoint } from '../../src/contract/editing.js'
import type { GtPhoto } from './gt-photos.js'
import { type Click, nextClick, toPoint } from './clicker.js'
import { pairTruth, quickScore } from './gt-score.js'
import { round } from './util.js'

/** A click's mask (8-bit, the photo's size) and how long it took (ms; `modelMs`: of it, the model's). */
export interface Refined {
  mask: Uint8Array
  ms: number
  modelMs?: number
}

/**
 * One click's refinement: `clicks` are every click so far, oldest first, the newest last (the one
 * this refinement adds); `base` is the mask after the click before.
 */
export type RefineClick = (photo: GtPhoto, base: Uint8Array, clicks: RefinementPoint[]) => Promise<Refined>

/** A way to run the protocol: the start mask (`balanced`) of a photo, then its clicks. */
export interface ClickMode {
  name: 'direct' | 'api'
  start(photo: GtPhoto): Promise<Refined>
  refine: RefineClick
  /** What the mode wants reported beside the results (cache use, the stack's settings). */
  info(): Record<string, unknown>
  close(): Promise<void>
}

/** The groups as ../shared/gt's README lists the sources (DAVIS's two sets apart). */
export const CLICK_GROUPS = ['alphamatting', 'davis', 'davis345', 'grabcut', 'cocomval'] as const
export type ClickGroup = (typeof CLICK_GROUPS)[number]

export function clickGroup(name: string): ClickGroup {
  if (name.startsWith('am') || name.startsWith('alphamatting-')) return 'alphamatting'
  if (name.startsWith('davis345-')) return 'davis345'
  if (name.startsWith('davis-')) return 'davis'
  if (name.startsWith('grabcut-')) return 'grabcut'
  if (name.startsWith('cocomval-')) return 'cocomval'
  throw new Error(`no group for ${name}`)
}

/** The IoU thresholds of NoC, the clicks at which IoU is reported, and the largest drop allowed. */
export const NOC_THRESHOLDS = [0.85, 0.9] as const
export const IOU_AT = [0, 1, 3, 5, 10, 20] as const
export const DROP_GOAL = 0.02

export interface PairRun {
  name: string
  group: ClickGroup
  width: number
  height: number
  /** IoU after 0 (the start mask), 1, … clicks, as run (maxClicks + 1 long unless it stopped early). */
  iou: number[]
  clicks: (Click & RefinementPoint)[]
  /** Each click's time (request to new mask), ms; `modelMs` the model's part of it (direct mode). */
  clickMs: number[]
  modelMs: number[]
  startMs: number
  /** Why it ran fewer than maxClicks clicks: no error left to click, or a refinement that failed. */
  stopped: string | null
}

/**
 * The start mask, asked for a second time when the first request fails: one slow or dropped
 * removal on a loaded machine should not cost a pair (a second failure does; the run goes on).
 */
async function startOnce(mode: ClickMode, photo: GtPhoto, log: (m: string) => void): Promise<Refined> {
  try {
    return await mode.start(photo)
  } catch (err) {
    log(`${photo.name}: start failed (${err instanceof Error ? err.message : String(err)}); asking once more`)
    return await mode.start(photo)
  }
}

/**
 * Runs the protocol on one pair: the start mask, then up to `maxClicks` clicks.
 * @example const run = await runPair(mode, photo, 20, console.error)
 */
export async function runPair(
  mode: ClickMode,
  photo: GtPhoto,
  maxClicks: number,
  log: (m: string) => void,
): Promise<PairRun> {
  const { name, width, height, alpha } = photo
  const truth = pairTruth(name, alpha, width, height)
  const truthFg = Uint8Array.from(alpha, (a) => (a >= 0.5 ? 1 : 0))
  const clicked = new Uint8Array(width * height)
  const run: PairRun = {
    name,
    group: clickGroup(name),
    width,
    height,
    iou: [],
    clicks: [],
    clickMs: [],
    modelMs: [],
    startMs: 0,
    stopped: null,
  }
  const start = await startOnce(mode, photo, log)
  let mask = start.mask
  run.startMs = round(start.ms, 0)
  run.iou.push(quickScore(truth, mask).iou)
  for (let k = 1; k <= maxClicks; k++) {
    const pred = Uint8Array.from(mask, (v) => (v >= 128 ? 1 : 0))
    const click = nextClick(truthFg, pred, truth.region, clicked, width, height)
    if (!click) {
      run.stopped = `no error left after ${k - 1} clicks`
      break
    }
    clicked[click.row * width + click.col] = 1
    const point = toPoint(click, width, height)
    run.clicks.push({ ...click, ...point })
    try {
      const refined = await mode.refine(
        photo,
        mask,
        run.clicks.map(({ x, y, label }) => ({ x, y, label })),
      )
      mask = refined.mask
      run.clickMs.push(round(refined.ms, 0))
      run.modelMs.push(round(refined.modelMs ?? 0, 0))
    } catch (err) {
      run.stopped = `click ${k} failed: ${err instanceof Error ? err.message : String(err)}`
      run.clicks.pop()
      log(`${name}: ${run.stopped}`)
      break
    }
    run.iou.push(quickScore(truth, mask).iou)
  }
  return run
}

/** IoU after `k` clicks; a pair that stopped earlier holds its last IoU. */
export const iouAfter = (run: PairRun, k: number): number => run.iou[Math.min(k, run.iou.length - 1)]

/** Clicks until IoU ≥ `threshold` (0: the start mask meets it; `maxClicks` when never). */
export function noc(run: PairRun, threshold: number, maxClicks: number): number {
  const k = run.iou.findIndex((v) => v >= threshold)
  return k < 0 ? maxClicks : k
}

/** The largest fall of IoU from one click to the next (0 when none fell), and at which click. */
export function worstDrop(run: PairRun): { click: number; drop: number } {
  let worst = { click: 0, drop: 0 }
  for (let k = 1; k < run.iou.length; k++) {
    const drop = round(run.iou[k - 1] - run.iou[k], 4)
    if (drop > worst.drop) worst = { click: k, drop }
  }
  return worst
}

/** The nearest-rank percentile `p` (0..1) of `xs` (null when empty). */
export function percentile(xs: number[], p: number): number | null {
  if (!xs.length) return null
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]
}

/** One pair's row of the report. */
export function pairRow(run: PairRun, maxClicks: number) {
  return {
    name: run.name,
    group: run.group,
    width: run.width,
    height: run.height,
    iouAt: Object.fromEntries(IOU_AT.filter((k) => k <= maxClicks).map((k) => [k, iouAfter(run, k)])),
    noc85: noc(run, 0.85, maxClicks),
    noc90: noc(run, 0.9, maxClicks),
    reached90: run.iou.some((v) => v >= 0.9),
    worstDrop: worstDrop(run),
    clickMs: { median: percentile(run.clickMs, 0.5), p90: percentile(run.clickMs, 0.9) },
    startMs: run.startMs,
    stopped: run.stopped,
    iou: run.iou,
    clicks: run.clicks.map((c) => ({ row: c.row, col: c.col, label: c.label })),
    clickMsEach: run.clickMs,
    modelMsEach: run.modelMs,
  }
}

const mean = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length, 4) : null)

/** A group's (or all pairs') row: mean IoU after k clicks, mean NoC, the pairs never at 90 %, drops, times. */
export function groupRow(runs: PairRun[], maxClicks: number) {
  const worst = runs
    .map((r) => ({ pair: r.name, ...worstDrop(r) }))
    .reduce((a, b) => (b.drop > a.drop ? b : a), { pair: '', click: 0, drop: 0 })
  const allMs = runs.flatMap((r) => r.clickMs)
  return {
    pairs: runs.length,
    iouAt: Object.fromEntries(
      IOU_AT.filter((k) => k <= maxClicks).map((k) => [k, mean(runs.map((r) => iouAfter(r, k)))]),
    ),
    noc85: mean(runs.map((r) => noc(r, 0.85, maxClicks))),
    noc90: mean(runs.map((r) => noc(r, 0.9, maxClicks))),
    never90: runs.filter((r) => !r.iou.some((v) => v >= 0.9)).map((r) => r.name),
    worstDrop: worst,
    pairsWithDropOverGoal: runs.filter((r) => worstDrop(r).drop > DROP_GOAL).map((r) => r.name),
    clickMs: { median: percentile(allMs, 0.5), p90: percentile(allMs, 0.9), n: allMs.length },
  }
}

export type GroupRow = ReturnType<typeof groupRow>

/** Per group in CLICK_GROUPS' order (those with pairs), then all pairs. */
export function groupTable(runs: PairRun[], maxClicks: number): Record<string, GroupRow> {
  const out: Record<string, GroupRow> = {}
  for (const g of CLICK_GROUPS) {
    const xs = runs.filter((r) => r.group === g)
    if (xs.length) out[g] = groupRow(xs, maxClicks)
  }
  out.all = groupRow(runs, maxClicks)
  return out
}

/** The group table as fixed-width text (IoU after 0, 1, 3, 5 clicks, NoC, never 90 %, worst drop, click time). */
export function formatTable(groups: Record<string, GroupRow>): string {
  const f = (v: number | null | undefined, d = 3) => (v == null ? '-' : v.toFixed(d))
  const head = [
    'group',
    'n',
    'IoU@0',
    'IoU@1',
    'IoU@3',
    'IoU@5',
    'NoC85',
    'NoC90',
    '<90',
    'worst drop',
    '>0.02',
    'click ms p50/p90',
  ]
  const rows = Object.entries(groups).map(([g, r]) => [
    g,
    String(r.pairs),
    f(r.iouAt[0]),
    f(r.iouAt[1]),
    f(r.iouAt[3]),
    f(r.iouAt[5]),
    f(r.noc85, 2),
    f(r.noc90, 2),
    String(r.never90.length),
    r.worstDrop.drop ? `${f(r.worstDrop.drop, 4)} (${r.worstDrop.pair} #${r.worstDrop.click})` : '0',
    String(r.pairsWithDropOverGoal.length),
    `${f(r.clickMs.median, 0)}/${f(r.clickMs.p90, 0)}`,
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  return [line(head), ...rows.map(line)].join('\n')
}
