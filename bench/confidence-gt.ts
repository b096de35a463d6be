/**
 * The `low_confidence` benchmark alone (issue 44 item 5): `npm run bench -- confidence-gt [--levels
 * fast,balanced] [--name latest] [--only 'davis']`. Each level's real code (levelAlpha, the server's)
 * over the model's cached masks (bench/.cache; offline unless --run-model: a missing mask is then an
 * error, not a slow model run) on ../shared/gt, each pair's IoU and every candidate measure's confidence, then
 * bench/lib/confidence-cv.ts: measure and threshold chosen leave-one-group-out by the level's
 * objective (CONFIDENCE_OBJECTIVES), each fold's precision and recall on its left-out group, the
 * pooled cross-validated figure and the in-sample choice. bench/quality-gt.ts makes the same
 * report for every level as part of its whole run; this one is the cheap way (no `high` candidates,
 * no timing). Writes bench/results/confidence-gt-<name>.json (numbers and pair names only).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { type DoubtMeasure, levelConfidence } from '../inference-server/src/levels/confidence.js'
import type { Quality } from '../inference-server/src/options.js'
import { levelAlpha } from '../inference-server/src/remove.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import { cachedSegmenter } from './lib/cached-segmenter.js'
import { CONFIDENCE_CANDIDATES, levelConfidenceReport } from './lib/confidence-cv.js'
import type { PairRow } from './lib/gt-report.js'
import { pairTruth, quickScore } from './lib/gt-score.js'
import { machineInfo, RESULTS_DIR } from './lib/util.js'
import { gtPhotos } from './lib/gt-photos.js'

const { values } = parseArgs({
  options: {
    levels: { type: 'string', default: 'fast,balanced' },
    name: { type: 'string', default: 'latest' },
    only: { type: 'string' },
    'run-model': { type: 'boolean', default: false },
  },
})
const levels = values.levels.split(',') as Quality[]
const photos = await gtPhotos(values.only)
const model = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)), {
  offline: !values['run-model'],
})
const rows: PairRow[] = []
const confidences: Record<string, Record<string, Partial<Record<DoubtMeasure, number>>>> = {}
try {
  for (const p of photos) {
    const { image } = await decodeImage(p.bytes)
    const truth = pairTruth(p.name, p.alpha, p.width, p.height)
    const scores: PairRow['scores'] = {}
    confidences[p.name] = {}
    for (const q of levels) {
      const level = await levelAlpha(model, image, q)
      scores[q] = quickScore(truth, level.mask.data)
      confidences[p.name][q] = Object.fromEntries(
        CONFIDENCE_CANDIDATES[q].map((m) => [m, levelConfidence(level.mask.data, level.doubts, m)]),
      )
    }
    rows.push({ name: p.name, group: truth.group, width: p.width, height: p.height, scores })
    process.stderr.write(
      `${p.name}: ${levels.map((q) => `${q} IoU ${scores[q].iou} ${JSON.stringify(confidences[p.name][q])}`).join('; ')}\n`,
    )
  }
} finally {
  await model.close()
}
const report = {
  machine: machineInfo(),
  cache: model.stats,
  confidence: Object.fromEntries(levels.map((q) => [q, levelConfidenceReport(rows, confidences, q)])),
  pairs: rows.map((r) => ({
    name: r.name,
    group: r.group,
    iou: Object.fromEntries(levels.map((q) => [q, r.scores[q].iou])),
    confidence: confidences[r.name],
  })),
}
mkdirSync(RESULTS_DIR, { recursive: true })
const file = `${RESULTS_DIR}confidence-gt-${values.name}.json`
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
for (const q of levels) {
  const c = report.confidence[q]
  process.stdout.write(
    `${q} (${c.objective}): cross-validated ${JSON.stringify(c.crossValidated)}\n  per measure ${JSON.stringify(c.perMeasure)}\n  in sample ${JSON.stringify(c.inSample)}; shipped ${JSON.stringify(c.shipped)}\n`,
  )
}
process.stderr.write(`wrote ${file}\n`)
