/**
 * `tsx bench/level-pictures.ts`: docs/quality/rocket-input-sizes.png, rocket.jpg beside its masks
 * at `balanced` (1024²), `fast` (its input for this photo) and 512², to show why no smaller input
 * keeps 1024²'s mask on it (docs/quality.md "Choosing fast's input").
 */
import { fileURLToPath } from 'node:url'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { fastInput } from '../inference-server/src/levels/sizes.js'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { sharp } from './lib/deps.js'
import { fixturePhoto } from './lib/images.js'

const OUT = fileURLToPath(new URL('../docs/quality/rocket-input-sizes.png', import.meta.url))
const segmenter = await createSegmenter()
const { image } = await decodeImage((await fixturePhoto('rocket.jpg')).bytes)
const { width: W, height: H } = image
const sizes = [segmenter.input.native, fastInput(image, segmenter.input), { width: 512, height: 512 }]
const panels = [
  await sharp(image.data, { raw: { width: W, height: H, channels: 3 } })
    .png()
    .toBuffer(),
]
for (const size of sizes) {
  const mask = await segmenter.segment(image, size)
  panels.push(
    await sharp(mask.data, { raw: { width: W, height: H, channels: 1 } })
      .png()
      .toBuffer(),
  )
}
// Composite first, then scale: in one sharp pipeline the resize would run before the composite.
const strip = await sharp({ create: { width: W * panels.length, height: H, channels: 3, background: '#000' } })
  .composite(panels.map((input, i) => ({ input, left: W * i, top: 0 })))
  .png()
  .toBuffer()
await sharp(strip).resize({ width: 1600 }).png({ compressionLevel: 9 }).toFile(OUT)
await segmenter.close()
console.log(`wrote ${OUT}: photo, ${sizes.map((s) => `${s.width}×${s.height}`).join(', ')}`)
