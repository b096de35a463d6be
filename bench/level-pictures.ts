/**
 * `npm run bench -- level-pictures`: the pictures docs/quality.md "Choosing fast's input" shows, to say
 * why no smaller input keeps 1024²'s mask on rocket.jpg:
 * - docs/quality/rocket-input-sizes.png: the photo beside its masks at `balanced` (1024²), `fast`
 *   (its input for this photo) and 512²;
 * - docs/quality/rocket-fast-difference.png: where `fast`'s mask (α ≥ 0.5) differs from
 *   `balanced`'s: red only in `fast`, green only in `balanced`, grey in both;
 * - docs/quality/iou-by-input-size.png: each fixture photo's IoU against `balanced` at every square
 *   input of the full sweep (bench/results/levels-sweep.json: `npm run bench -- levels --full --name sweep`).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import type { Mask } from '../inference-server/src/imaging/types.js'
import { fastInputFor } from '../inference-server/src/levels/fast.js'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { sharp } from './lib/deps.js'
import { FIXTURE_PHOTOS, fixturePhoto } from './lib/images.js'
import { RESULTS_DIR } from './lib/util.js'

const docs = (name: string) => fileURLToPath(new URL(`../docs/quality/${name}`, import.meta.url))

const gray = (m: Mask) => sharp(m.data, { raw: { width: m.width, height: m.height, channels: 1 } })

/** Panels side by side, then scaled to 1600 px wide (composite first: in one pipeline sharp resizes first). */
async function strip(panels: Buffer[], width: number, height: number, out: string): Promise<void> {
  const joined = await sharp({ create: { width: width * panels.length, height, channels: 3, background: '#000' } })
    .composite(panels.map((input, i) => ({ input, left: width * i, top: 0 })))
    .png()
    .toBuffer()
  await sharp(joined).resize({ width: 1600 }).png({ compressionLevel: 9 }).toFile(out)
}

/** Red where only `fast` is foreground, green where only `balanced` is, grey where both are. */
function differenceMap(fast: Mask, balanced: Mask): Buffer {
  const out = Buffer.alloc(fast.data.length * 3)
  for (let i = 0; i < fast.data.length; i++) {
    const [f, b] = [fast.data[i] >= 128, balanced.data[i] >= 128]
    const rgb = f && b ? [200, 200, 200] : f ? [255, 40, 40] : b ? [40, 220, 40] : [0, 0, 0]
    out.set(rgb, i * 3)
  }
  return out
}

/** A line per image: IoU against `balanced` over the square input side, with the 0.95 line. */
function iouChart(sweep: { iou: Record<string, Record<string, number>> }, names: readonly string[]): string {
  const sides = [512, 576, 640, 704, 768, 832, 896, 960]
  const [w, h, left, top, right, bottom] = [760, 420, 60, 30, 170, 50]
  const x = (side: number) => left + ((side - 512) / (960 - 512)) * (w - left - right)
  const y = (iou: number) => top + (1 - (iou - 0.5) / 0.5) * (h - top - bottom)
  const colours = ['#3050d8', '#d83030', '#1e7b34', '#b07000']
  const lines = names.map(
    (name, k) =>
      `<polyline fill="none" stroke="${colours[k]}" stroke-width="2.5" points="${sides
        .map((side) => `${x(side)},${y(Math.max(0.5, sweep.iou[name][`square-${side}`]))}`)
        .join(' ')}"/>`,
  )
  // Labels at the lines' right ends, pushed apart where the lines end close together.
  const ends = names
    .map((name, k) => ({ name, k, at: y(Math.max(0.5, sweep.iou[name]['square-960'])) + 4 }))
    .sort((a, b) => a.at - b.at)
  for (let i = 1; i < ends.length; i++) ends[i].at = Math.max(ends[i].at, ends[i - 1].at + 15)
  const labels = ends.map((e) => `<text x="${x(960) + 8}" y="${e.at}" fill="${colours[e.k]}">${e.name}</text>`)
  const ticks = sides.map((s) => `<text x="${x(s)}" y="${h - bottom + 18}" text-anchor="middle">${s}²</text>`)
  const yTicks = [0.5, 0.6, 0.7, 0.8, 0.9, 1].map(
    (v) => `<text x="${left - 8}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(1)}</text>
      <line x1="${left}" x2="${x(960)}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
  )
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="13">
    <rect width="100%" height="100%" fill="#fff"/>
    ${yTicks.join('')}
    <line x1="${left}" x2="${x(960)}" y1="${y(0.95)}" y2="${y(0.95)}" stroke="#888" stroke-dasharray="6 4"/>
    <text x="${x(960) - 4}" y="${y(0.95) + 16}" fill="#555" text-anchor="end">IoU 0.95 (the issue's bar)</text>
    ${lines.join('')}${labels.join('')}${ticks.join('')}
    <text x="${(left + x(960)) / 2}" y="${h - 8}" text-anchor="middle">model input (square side); balanced = 1024²</text>
    <text x="16" y="${top - 10}">mask IoU against balanced</text>
  </svg>`
}

const segmenter = await createSegmenter()
try {
  const { image } = await decodeImage((await fixturePhoto('rocket.jpg')).bytes)
  const { width: W, height: H } = image
  const fast = fastInputFor(image, segmenter.input)
  const sizes = [segmenter.input.native, fast, { width: 512, height: 512 }]
  const masks = [] as Mask[]
  for (const size of sizes) masks.push(await segmenter.segment(image, size))
  const photo = await sharp(image.data, { raw: { width: W, height: H, channels: 3 } })
    .png()
    .toBuffer()
  await strip(
    [photo, ...(await Promise.all(masks.map((m) => gray(m).png().toBuffer())))],
    W,
    H,
    docs('rocket-input-sizes.png'),
  )
  const difference = await sharp(differenceMap(masks[1], masks[0]), { raw: { width: W, height: H, channels: 3 } })
    .png()
    .toBuffer()
  await strip([photo, difference], W, H, docs('rocket-fast-difference.png'))

  const sweep = JSON.parse(readFileSync(`${RESULTS_DIR}levels-sweep.json`, 'utf8'))
  await sharp(Buffer.from(iouChart(sweep, FIXTURE_PHOTOS)))
    .png()
    .toFile(docs('iou-by-input-size.png'))
  console.log(
    `wrote docs/quality/: rocket at ${sizes.map((s) => `${s.width}×${s.height}`).join(', ')}; fast's difference; IoU by size`,
  )
} finally {
  await segmenter.close()
}
