import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { HIGH_DEFAULTS } from '../inference-server/src/levels/index.js'
import { levelAlpha } from '../inference-server/src/remove.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import { cachedSegmenter } from './lib/cached-segmenter.js'
import { pairTruth, quickScore } from './lib/gt-score.js'
import { highEvaluator } from './lib/high-candidates.js'
import { gtPhotos } from './quality-gt.js'
const photos = await gtPhotos(process.argv[2])
const model = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)), { offline: true })
const f = { low: 25, high: 230, share: 0.8 }
const edges = JSON.parse(process.argv[3] ?? '[{"method":"matte","steps":1}]')
for (const p of photos) {
  const { image } = await decodeImage(p.bytes)
  const truth = pairTruth(p.name, p.alpha, p.width, p.height)
  const high = highEvaluator(model, image)
  const bal = quickScore(truth, (await levelAlpha(model, image, 'balanced')).mask.data)
  const grid = (await high({ ...HIGH_DEFAULTS, faint: f })).mask.data
  const none = (await high({ ...HIGH_DEFAULTS, faint: null })).mask.data
  let raised = 0
  for (let i = 0; i < grid.length; i++) if (grid[i] !== none[i]) raised++
  const row = [p.name, 'raised', raised, 'bal', bal.sad, bal.iou?.toFixed(4), 'grid', quickScore(truth, grid).sad, quickScore(truth, grid).iou?.toFixed(4)]
  if (raised) for (const edge of edges) { const s = quickScore(truth, (await high({ ...HIGH_DEFAULTS, faint: { ...f, edge } })).mask.data); row.push(edge.method + edge.steps, s.sad, s.iou?.toFixed(4)) }
  console.log(row.join(' '))
}
await model.close()
