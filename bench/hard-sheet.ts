/**
 * Looks at pairs of ../shared/gt closely (session 12, issue 31's hardest pairs): photo, truth,
 * `balanced`, `high` before (no own faint pass), `high` as shipped; one row per pair, written to
 * bench/results/sheets/ (ignored by git: the photos and their truth must never be committed).
 * `GT_DIR=… npm run bench -- hard-sheet --only 'giraffe|horsejump-high|bmx' --name hard`
 */
import { mkdirSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { HIGH_DEFAULTS } from '../inference-server/src/levels/index.js'
import { levelAlpha } from '../inference-server/src/remove.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import { cachedSegmenter } from './lib/cached-segmenter.js'
import { sharp } from './lib/deps.js'
import { tileRow } from './lib/gt-sheet.js'
import { highEvaluator } from './lib/high-candidates.js'
import { RESULTS_DIR } from './lib/util.js'
import { gtPhotos } from './lib/gt-photos.js'

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'giraffe|horsejump-high|bmx' },
    name: { type: 'string', default: 'hard' },
  },
})
const H = 300
const GAP = 6
const photos = await gtPhotos(values.only)
const model = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)), { offline: true })
const rows: { buf: Buffer; w: number }[] = []
try {
  for (const p of photos) {
    const { image } = await decodeImage(p.bytes)
    const high = highEvaluator(model, image)
    const planes = [
      Uint8Array.from(p.alpha, (a) => Math.round(a * 255)),
      (await levelAlpha(model, image, 'balanced')).mask.data,
      (await high({ ...HIGH_DEFAULTS, faint: null })).mask.data,
      (await levelAlpha(model, image, 'high')).mask.data,
    ]
    const w = Math.round((p.width * H) / p.height)
    const tiles = [
      await sharp(p.bytes).resize(w, H, { fit: 'fill' }).removeAlpha().toColourspace('srgb').raw().toBuffer(),
    ]
    for (const plane of planes)
      tiles.push(
        await sharp(plane, { raw: { width: p.width, height: p.height, channels: 1 } })
          .resize(w, H, { fit: 'fill' })
          .toColourspace('srgb')
          .raw()
          .toBuffer(),
      )
    const width = tiles.length * (w + GAP)
    rows.push({ buf: await tileRow(tiles, w, H, GAP, '#c00'), w: width })
    process.stderr.write(`${p.name}\n`)
  }
} finally {
  await model.close()
}
mkdirSync(`${RESULTS_DIR}sheets/`, { recursive: true })
const width = Math.max(...rows.map((r) => r.w))
const file = `${RESULTS_DIR}sheets/${values.name}.png`
await sharp({ create: { width, height: rows.length * (H + GAP), channels: 3, background: '#fff' } })
  .composite(
    rows.map((r, k) => ({
      input: r.buf,
      raw: { width: r.w, height: H, channels: 3 as const },
      left: 0,
      top: k * (H + GAP),
    })),
  )
  .png()
  .toFile(file)
process.stderr.write(`${file} (columns: photo, truth, balanced, high without its own faint pass, high)\n`)
