/**
 * `npm run bench -- crops [composite]`: the before/after crops of docs/quality.md. One 12 MP synthetic composite
 * (bench/quality-synthetic.ts) goes through `fast`, `balanced` and `high`; a 200×200 window on the object's edge is
 * cut from the true alpha and from each result, and each cutout is laid over a flat green so edge
 * halos and leftover background colour show. Writes docs/quality/*.png (small, committed).
 */
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { removeBackground } from '../inference-server/src/remove.js'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { sharp } from './lib/deps.js'
import { fixturePhoto, FIXTURE_PHOTOS } from './lib/images.js'
import { makeComposites } from './lib/composites.js'

const OUT = fileURLToPath(new URL('../docs/quality/', import.meta.url))
const SIZE = 200
const GREEN = [40, 200, 60]
const which = process.argv[2] ?? 'astronaut-on-rocket-12mp'

const segmenter = await createSegmenter()
const masks = new Map<string, { data: Uint8Array; width: number; height: number }>()
for (const name of FIXTURE_PHOTOS) {
  const photo = await fixturePhoto(name)
  const r = await removeBackground(segmenter, photo.bytes, {
    quality: 'balanced',
    alpha: { mode: 'raw', feather: 0 },
    output: 'mask',
  })
  masks.set(name, {
    data: new Uint8Array((await sharp(r.png).extractChannel(0).raw().toBuffer()).buffer),
    width: photo.width,
    height: photo.height,
  })
}
const c = (await makeComposites(masks, [which.endsWith('4mp') ? '4mp' : '12mp'])).find((x) => x.name === which)!

// The window with the most edge pixels (0.05 < α < 0.95), on a coarse grid.
let best = { x: 0, y: 0, n: -1 }
for (let y = 0; y + SIZE <= c.height; y += SIZE / 2) {
  for (let x = 0; x + SIZE <= c.width; x += SIZE / 2) {
    let n = 0
    for (let j = 0; j < SIZE; j += 2)
      for (let i = 0; i < SIZE; i += 2) {
        const a = c.alpha[(y + j) * c.width + x + i]
        if (a > 0.05 && a < 0.95) n++
      }
    if (n > best.n) best = { x, y, n }
  }
}
const region = { left: best.x, top: best.y, width: SIZE, height: SIZE }
mkdirSync(OUT, { recursive: true })

/** RGBA over flat green, cropped. */
async function overGreen(rgba: Uint8Array, file: string) {
  const crop = new Uint8Array(SIZE * SIZE * 3)
  for (let j = 0; j < SIZE; j++)
    for (let i = 0; i < SIZE; i++) {
      const s = ((region.top + j) * c.width + region.left + i) * 4
      const a = rgba[s + 3] / 255
      for (let ch = 0; ch < 3; ch++) crop[(j * SIZE + i) * 3 + ch] = Math.round(a * rgba[s + ch] + (1 - a) * GREEN[ch])
    }
  await sharp(crop, { raw: { width: SIZE, height: SIZE, channels: 3 } })
    .png({ compressionLevel: 9 })
    .toFile(`${OUT}${file}`)
}
async function alphaCrop(alpha: Uint8Array, file: string) {
  await sharp(alpha, { raw: { width: c.width, height: c.height, channels: 1 } })
    .extract(region)
    .toColourspace('b-w')
    .png({ compressionLevel: 9 })
    .toFile(`${OUT}${file}`)
}

const truthRgba = new Uint8Array(c.width * c.height * 4)
const truthAlpha = new Uint8Array(c.width * c.height)
for (let p = 0; p < truthAlpha.length; p++) {
  truthAlpha[p] = Math.round(c.alpha[p] * 255)
  truthRgba.set([c.fg[p * 3], c.fg[p * 3 + 1], c.fg[p * 3 + 2], truthAlpha[p]], p * 4)
}
await overGreen(truthRgba, `${which}-truth-cutout.png`)
await alphaCrop(truthAlpha, `${which}-truth-alpha.png`)
for (const quality of ['fast', 'balanced', 'high'] as const) {
  const cutout = await removeBackground(segmenter, c.bytes, {
    quality,
    alpha: { mode: 'raw', feather: 0 },
    output: 'cutout',
  })
  const rgba = new Uint8Array((await sharp(cutout.png).ensureAlpha().raw().toBuffer()).buffer)
  await overGreen(rgba, `${which}-${quality}-cutout.png`)
  const alpha = new Uint8Array(c.width * c.height)
  for (let p = 0; p < alpha.length; p++) alpha[p] = rgba[p * 4 + 3]
  await alphaCrop(alpha, `${which}-${quality}-alpha.png`)
}
await segmenter.close()
console.log(`crops of ${which} at (${region.left}, ${region.top}) ${SIZE}×${SIZE} written to docs/quality/`)
