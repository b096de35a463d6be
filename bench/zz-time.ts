import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { HIGH_DEFAULTS, ownFaintPass } from '../inference-server/src/levels/index.js'
import { finishBasis } from '../inference-server/src/levels/fast.js'
import { createLevelSegmenters, levelModelsFromEnv } from '../inference-server/src/segmentation/per-level.js'
import { cachedSegmenter } from './lib/cached-segmenter.js'
import { gtPhotos } from './quality-gt.js'
const photos = await gtPhotos(process.argv[2])
const model = cachedSegmenter(await createLevelSegmenters(levelModelsFromEnv(process.env)), { offline: true })
const f = { low: 25, high: 230, share: 0.8 }
const native = model.input.native
for (const p of photos) {
  const { image } = await decodeImage(p.bytes)
  const base = await model.segment(image, native)
  const out: string[] = []
  for (const edge of [undefined, { method: 'ramp', steps: 1 }, { method: 'matte', steps: 1 }, { method: 'matte', steps: 2 }] as const) {
    const t = performance.now()
    await ownFaintPass(image, base, base, { ...f, edge }, native)
    out.push(`${edge ? edge.method + edge.steps : 'grid'} ${(performance.now() - t).toFixed(0)}ms`)
  }
  console.log(p.name, image.width, image.height, out.join(', '))
}
await model.close()
