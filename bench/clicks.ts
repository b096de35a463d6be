/**
 * The clicks benchmark (issue 44 item 1; part of `npm run bench`, or alone:
 * `npx tsx bench/clicks.ts [--direct] [--pairs <substring>[,<substring>…]] [--max-clicks 20] [--megapixels 1] [--name latest]`).
 * The interactive-segmentation field's protocol (RITM, SimpleClick, SAM evaluations) on the real
 * photos of ../shared/gt, starting from our `balanced` cutout: one simulated click at a time
 * (bench/lib/clicker.ts: at the innermost pixel of the larger error region), each a refinement with
 * one new point, up to 20 clicks (a project's 20 refinements), and the IoU after each click.
 * Per pair and per group (bench/lib/click-protocol.ts): IoU after 0, 1, 3, 5 clicks, NoC@85 and
 * NoC@90, the pairs never at 90 %, the largest IoU drop of one click (the goal: none over 0.02),
 * and a click's time (request to new revision).
 *
 * Modes (bench/lib/click-modes.ts): the public API of a local stack by default (the measurement of
 * record, 2–10 s a click on a 2-core box), or `--direct`: the server's refinement code in this
 * process over the cached model (bench/.cache), for iterating on the algorithm. `--self-test`
 * checks the click simulator and exits. `--megapixels N` scales each photo and its truth up to about
 * N MP first (bilinear), for the click time at the size the goal names (1 MP; the pairs are smaller). Writes bench/results/clicks-<name>.json (numbers only) and
 * prints the group table.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { nextClick, squaredDistances, toPoint } from './lib/clicker.js'
import { apiMode, directMode } from './lib/click-modes.js'
import {
  type ClickMode,
  DROP_GOAL,
  formatTable,
  groupTable,
  NOC_THRESHOLDS,
  type PairRun,
  pairRow,
  runPair,
} from './lib/click-protocol.js'
import { sharp } from './lib/deps.js'
import { machineInfo, RESULTS_DIR } from './lib/util.js'
import { type GtPhoto, gtPhotos } from './lib/gt-photos.js'

export const MAX_CLICKS = 20

/** `photo` and its truth scaled (bilinear, aspect kept) to about `megapixels`; a JPEG at quality 95. */
async function scaledPhoto(photo: GtPhoto, megapixels: number): Promise<GtPhoto> {
  const scale = Math.sqrt((megapixels * 1e6) / (photo.width * photo.height))
  const width = Math.round(photo.width * scale)
  const height = Math.round(photo.height * scale)
  const bytes = await sharp(photo.bytes).resize(width, height, { fit: 'fill' }).jpeg({ quality: 95 }).toBuffer()
  const truth = Buffer.from(Uint8Array.from(photo.alpha, (a) => Math.round(a * 255)))
  const scaled = await sharp(truth, { raw: { width: photo.width, height: photo.height, channels: 1 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .toColourspace('b-w')
    .raw()
    .toBuffer()
  const alpha = Float32Array.from(scaled, (v) => v / 255)
  return { name: photo.name, bytes: new Uint8Array(bytes), width, height, alpha }
}

/**
 * Runs the protocol on the pairs whose name contains `pairs` (or one of its comma-separated
 * substrings; all pairs by default) and returns the report.
 * @example const report = await runClicksBench({ direct: true, pairs: 'davis' })
 */
export async function runClicksBench({
  direct = false,
  pairs,
  maxClicks = MAX_CLICKS,
  megapixels,
  verbose = false,
  log = (m: string) => process.stderr.write(`${m}\n`),
}: {
  direct?: boolean
  pairs?: string
  maxClicks?: number
  megapixels?: number
  verbose?: boolean
  log?: (m: string) => void
} = {}) {
  const wanted = pairs?.split(',').filter(Boolean) ?? []
  const chosen = (await gtPhotos()).filter((p) => !wanted.length || wanted.some((w) => p.name.includes(w)))
  const photos = megapixels ? await Promise.all(chosen.map((p) => scaledPhoto(p, megapixels))) : chosen
  if (!photos.length) throw new Error(`no pair of ../shared/gt matches ${JSON.stringify(pairs)}`)
  const started = Date.now()
  log(`clicks: ${photos.length} pairs, ${direct ? 'direct' : 'API'} mode, up to ${maxClicks} clicks`)
  const mode: ClickMode = direct ? await directMode() : await apiMode({ verbose })
  const runs: PairRun[] = []
  // Pairs whose start mask could not be had twice: named in the result, left out of the tables.
  const failed: { name: string; error: string }[] = []
  try {
    for (const photo of photos) {
      let run: PairRun
      try {
        run = await runPair(mode, photo, maxClicks, log)
      } catch (err) {
        failed.push({ name: photo.name, error: err instanceof Error ? err.message : String(err) })
        log(`${photo.name}: left out: ${failed[failed.length - 1].error}`)
        continue
      }
      runs.push(run)
      const ms = run.clickMs.length ? Math.round(run.clickMs.reduce((a, b) => a + b, 0) / run.clickMs.length) : 0
      log(
        `${photo.name}: IoU ${run.iou.map((v) => v.toFixed(3)).join(' ')}; ${ms} ms a click${run.stopped ? `; ${run.stopped}` : ''}`,
      )
    }
  } finally {
    await mode.close()
  }
  return {
    method: {
      mode: direct
        ? 'direct: levelAlpha balanced (cached model), then refineMask({ points: [newest], earlierPoints }) on the previous mask, in process'
        : 'api: local stack (inference server + wrangler dev): balanced removal, POST /v1/projects, per click POST …/refinements {points: [newest], baseRevisionId}, its end on the project events stream, GET the revision mask',
      clicker:
        "RITM's (isegm/inference/clicker.py): exact EDT of the FN and FP regions padded with a 1-px zero border (ignored and clicked pixels left out); positive when max FN distance > max FP distance; at the first row-major pixel of the maximum; sent as ((col + 0.5) / width, (row + 0.5) / height)",
      iou: 'prediction ≥ 128 against truth ≥ 0.5; GrabCut 128 band left out',
      maxClicks,
      ...(megapixels
        ? { scaledTo: `${megapixels} MP (photo and truth bilinear, the photo a JPEG at quality 95)` }
        : {}),
      noc: `clicks until IoU ≥ ${NOC_THRESHOLDS.join(' / ')} (0: the start mask meets it; ${maxClicks}: never)`,
      held: 'a pair that stopped before k clicks (no error left, or a failed refinement) holds its last IoU',
      dropGoal: `no click lowers IoU by more than ${DROP_GOAL}`,
      clickMs:
        'request to new revision (api: POST until its end on the event stream; direct: the refineMask call, modelMs = of it, model runs not in the cache)',
    },
    mode: mode.info(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    failed,
    groups: groupTable(runs, maxClicks),
    pairs: runs.map((r) => pairRow(r, maxClicks)),
  }
}

/** The clicker's checks (`--self-test`): a few cases whose answer is known by hand. */
export function selfTest(): void {
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`clicker self-test failed: ${what}`)
    process.stderr.write(`ok: ${what}\n`)
  }
  // The EDT: a 5×5 block inside a 7×7 image: its centre is 3 from the nearest pixel outside.
  const block = new Uint8Array(49)
  for (let y = 1; y < 6; y++) for (let x = 1; x < 6; x++) block[y * 7 + x] = 1
  const d = squaredDistances(block, 7, 7)
  check(
    d[3 * 7 + 3] === 9 && d[1 * 7 + 1] === 1 && d[0] === 0,
    'EDT of a 5×5 block: 3 at its centre, 1 at its rim, 0 outside',
  )
  // A diagonal: exact Euclidean, not city-block: a 9×9 region's corner pixel has (1,1) to no pixel outside
  // but the padded border is at distance 1; its centre at 5.
  const full = new Uint8Array(81).fill(1)
  const e = squaredDistances(full, 9, 9)
  check(e[4 * 9 + 4] === 25 && e[0] === 1, 'the image border counts as the region border (1-px zero padding)')
  // A square false-negative hole in a predicted-background image: the click is at its centre, positive.
  const w = 20
  const h = 12
  const truth = new Uint8Array(w * h)
  for (let y = 3; y < 8; y++) for (let x = 10; x < 15; x++) truth[y * w + x] = 1
  const pred = new Uint8Array(w * h)
  const c = nextClick(truth, pred, null, null, w, h)
  check(c?.positive === true && c.row === 5 && c.col === 12, 'a 5×5 FN hole is clicked at its centre, foreground')
  const p = toPoint(c ?? { row: 0, col: 0, positive: true }, w, h)
  check(
    p.x === 12.5 / 20 && p.y === 5.5 / 12 && p.label === 'foreground',
    'the click goes to the API at the pixel centre',
  )
  // Everything predicted, nothing true: the FP region is the whole image; its innermost pixel is the
  // first row-major pixel at the largest distance (the border counts), a background click.
  const all = new Uint8Array(w * h).fill(1)
  const b = nextClick(new Uint8Array(w * h), all, null, null, w, h)
  check(
    b?.positive === false && b.row === 5 && b.col === 5,
    'a full FP image: background click at the first innermost pixel',
  )
  // A larger FP region than the FN hole wins; ignored pixels are in neither region.
  const pred2 = new Uint8Array(w * h)
  for (let y = 0; y < h; y++) for (let x = 0; x < 8; x++) pred2[y * w + x] = 1
  const f = nextClick(truth, pred2, null, null, w, h)
  check(f?.positive === false && f.col < 8, 'a 8-wide FP band beats the 5×5 FN hole')
  const ignore = Uint8Array.from(pred2, (v) => 1 - v)
  const g = nextClick(truth, pred2, ignore, null, w, h)
  check(g?.positive === true && g.row === 5 && g.col === 12, 'ignored pixels are in neither region')
  // A clicked pixel is not clicked again: the next click in the same hole moves off it.
  const clicked = new Uint8Array(w * h)
  clicked[5 * w + 12] = 1
  const n = nextClick(truth, pred, null, clicked, w, h)
  check(n?.positive === true && !(n.row === 5 && n.col === 12), 'a clicked pixel is left out of the next click')
  check(nextClick(truth, truth, null, null, w, h) === null, 'no error: no click')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      name: { type: 'string', default: 'latest' },
      direct: { type: 'boolean', default: false },
      pairs: { type: 'string' },
      'max-clicks': { type: 'string', default: String(MAX_CLICKS) },
      megapixels: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      'self-test': { type: 'boolean', default: false },
    },
  })
  if (values['self-test']) {
    selfTest()
    process.exit(0)
  }
  if (!values.direct && typeof WebSocket === 'undefined') {
    // Node 20: API mode's stack needs a WebSocket client (`npm run bench` sets the flag); run again with it.
    const again = spawnSync(
      process.execPath,
      ['--experimental-websocket', ...process.execArgv, ...process.argv.slice(1)],
      {
        stdio: 'inherit',
      },
    )
    process.exit(again.status ?? 1)
  }
  const result = await runClicksBench({
    direct: values.direct,
    pairs: values.pairs,
    maxClicks: Number(values['max-clicks']),
    megapixels: values.megapixels ? Number(values.megapixels) : undefined,
    verbose: values.verbose,
  })
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}clicks-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stdout.write(`${formatTable(result.groups)}\n`)
  process.stderr.write(`wrote ${file}\n`)
}
