/**
 * Looks at the faint pass's raised border closely (session 12, raise-edge.ts): four 120² crops per
 * pair along the border between what the pass raised and what it left faint, enlarged 3× (nearest),
 * one row each: photo | truth | `high` with the border on the colour cut's grid | ramp, 1 grid step |
 * matting solve, 1 step | matting solve, 2 steps. Written to bench/results/sheets/edge-<pair>.png
 * (ignored by git: the photos and their truth must never be committed).
 * `GT_DIR=… npm run bench -- edge-crops 'giraffe|ostrich'`
 */
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { UNSURE_BAND } from '../inference-server/src/levels/bands.js'
import { HIGH_DEFAULTS } from '../inference-server/src/levels/index.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import { cachedSegmenter } from './lib/cached-segmenter.js'
import { sharp } from './lib/deps.js'
import { tileRow } from './lib/gt-sheet.js'
import { highEvaluator } from './lib/high-candidates.js'
import { gtPhotos } from './lib/gt-photos.js'

const C = 120,
  Z = 3,
  GAP = 4
const photos = await gtPhotos(process.argv[2] ?? 'giraffe|ostrich')
const model = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)), { offline: true })
const f = HIGH_DEFAULTS.faint ?? { ...UNSURE_BAND, share: 0.8 }
for (const p of photos) {
  const { image } = await decodeImage(p.bytes)
  const { width: W, height: H } = image
  const high = highEvaluator(model, image)
  const none = (await high({ ...HIGH_DEFAULTS, faint: null })).mask.data
  const variants = [
    (await high({ ...HIGH_DEFAULTS, faint: { ...f, edge: undefined } })).mask.data,
    (await high({ ...HIGH_DEFAULTS, faint: { ...f, edge: { method: 'ramp', steps: 1 } } })).mask.data,
    (await high({ ...HIGH_DEFAULTS, faint: { ...f, edge: { method: 'matte', steps: 1 } } })).mask.data,
    (await high({ ...HIGH_DEFAULTS, faint: { ...f, edge: { method: 'matte', steps: 2 } } })).mask.data,
  ]
  const truth = Uint8Array.from(p.alpha, (a) => Math.round(a * 255))
  // border points: raised (grid) pixels next to a faint pixel left as it was
  const g = variants[0]
  const pts: number[] = []
  for (let y = 1; y < H - 1; y++)
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x
      if (g[i] !== 255 || none[i] === 255) continue
      if ([i - 1, i + 1, i - W, i + W].some((j) => g[j] < 230 && g[j] > 25)) pts.push(i)
    }
  console.log(p.name, W, H, 'border px', pts.length)
  const picks = [0.15, 0.4, 0.65, 0.9].map((q) => pts[Math.floor(q * pts.length)]).filter((v) => v !== undefined)
  const rows: Buffer[] = []
  for (const i of picks) {
    const cx = Math.min(Math.max(0, (i % W) - C / 2), W - C),
      cy = Math.min(Math.max(0, Math.floor(i / W) - C / 2), H - C)
    const crop = (plane: Uint8Array, ch: 1 | 3) =>
      sharp(Buffer.from(plane), { raw: { width: W, height: H, channels: ch } })
        .extract({ left: cx, top: cy, width: C, height: C })
        .resize(C * Z, C * Z, { kernel: 'nearest' })
        .toColourspace('srgb')
        .removeAlpha()
        .raw()
        .toBuffer()
    const tiles = [
      await crop(image.data, 3),
      await crop(truth, 1),
      ...(await Promise.all(variants.map((v) => crop(v, 1)))),
    ]
    const w = C * Z
    rows.push(await tileRow(tiles, w, w, GAP, '#c00'))
    console.log(' crop at', cx, cy)
  }
  const w = 6 * (C * Z + GAP)
  await sharp({ create: { width: w, height: rows.length * (C * Z + GAP), channels: 3, background: '#fff' } })
    .composite(
      rows.map((r, k) => ({
        input: r,
        raw: { width: w, height: C * Z, channels: 3 as const },
        left: 0,
        top: k * (C * Z + GAP),
      })),
    )
    .png()
    .toFile(`/work/wt/faintedge/bench/results/sheets/edge-${p.name}.png`)
}
await model.close()
