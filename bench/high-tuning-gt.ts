/**
 * Tuning `high` on the real photos (issue 22), not part of `npm run bench`:
 * `tsx bench/high-tuning-gt.ts` runs the model once per photo and candidate view (input size,
 * flip), caches the masks in bench/results/sheets/cache/ (ignored by git, like the photos), and
 * scores fusions of those views against the truth, so a fusion rule is compared without re-running
 * the model. Prints SAD (thousands) per photo and the mean per candidate.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { inputFor } from '../inference-server/src/levels/sizes.js'
import type { RgbImage } from '../inference-server/src/imaging/types.js'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import { gtPhotos } from './quality-gt.js'
import { matting } from './lib/matting-metrics.js'
import { mattingSolve } from '../inference-server/src/imaging/matting.js'
import { RESULTS_DIR } from './lib/util.js'

const CACHE = `${RESULTS_DIR}sheets/cache/`

export const VIEWS = {
  sq1024: { side: 1024, square: true, flip: false },
  sq1024f: { side: 1024, square: true, flip: true },
  a704: { side: 704, square: false, flip: false },
  a1024: { side: 1024, square: false, flip: false },
  a1280: { side: 1280, square: false, flip: false },
  a1280f: { side: 1280, square: false, flip: true },
  sq768: { side: 768, square: true, flip: false },
  // Candidates for `fast` (one run, ≥ 2× faster than 1024² at the model).
  sq640: { side: 640, square: true, flip: false },
  a640: { side: 640, square: false, flip: false },
  sq704: { side: 704, square: true, flip: false },
  a704f: { side: 704, square: false, flip: true },
  sq512: { side: 512, square: true, flip: false },
  sq512f: { side: 512, square: true, flip: true },
} as const
export type View = keyof typeof VIEWS

function flipH(image: RgbImage): RgbImage {
  const { width, height } = image
  const out = new Uint8Array(image.data.length)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let c = 0; c < 3; c++) out[(y * width + x) * 3 + c] = image.data[(y * width + (width - 1 - x)) * 3 + c]
  return { ...image, data: out }
}
function flipMask(m: Uint8Array, width: number, height: number): Uint8Array {
  const out = new Uint8Array(m.length)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) out[y * width + x] = m[y * width + width - 1 - x]
  return out
}

export async function cachedViews(only?: string) {
  mkdirSync(CACHE, { recursive: true })
  const photos = await gtPhotos(only)
  const model = await createSegmenter()
  const out: Array<{
    name: string
    width: number
    height: number
    truth: Float32Array
    image: RgbImage
    views: Record<View, Uint8Array>
  }> = []
  for (const p of photos) {
    const { image } = await decodeImage(p.bytes)
    const views = {} as Record<View, Uint8Array>
    for (const [v, spec] of Object.entries(VIEWS) as Array<[View, (typeof VIEWS)[View]]>) {
      const file = `${CACHE}${p.name}.${v}.raw`
      if (existsSync(file)) {
        views[v] = new Uint8Array(readFileSync(file))
        continue
      }
      const size = spec.square
        ? { width: spec.side, height: spec.side }
        : inputFor(image, spec.side, 'aspect', model.input.kind === 'any' ? model.input.multiple : 64)
      const m = await model.segment(spec.flip ? flipH(image) : image, size)
      views[v] = spec.flip ? flipMask(m.data, image.width, image.height) : m.data
      writeFileSync(file, views[v])
      process.stderr.write(`${p.name} ${v}\n`)
    }
    out.push({ name: p.name, width: p.width, height: p.height, truth: p.alpha, image, views })
  }
  await model.close()
  return out
}

/** Mean decisiveness of a view: 1 where every pixel is 0 or 255, 0 where all are 0.5. */
export function confidence(m: Uint8Array): number {
  let c = 0
  for (let i = 0; i < m.length; i++) c += Math.abs(m[i] - 127.5)
  return c / (127.5 * m.length)
}

/** The most decisive of `views`; the first (the reference view) unless another beats it by `margin`. */
export function pick(views: Record<View, Uint8Array>, among: View[], margin: number): View {
  let best = among[0]
  let bestC = confidence(views[best]) + margin
  for (const v of among.slice(1)) {
    const c = confidence(views[v])
    if (c > bestC) [best, bestC] = [v, c]
  }
  return best
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const data = await cachedViews(process.argv[2])
  const sums: Record<string, number> = {}
  const among = (process.env.AMONG ?? 'sq1024,sq1024f,a1024').split(',') as View[]
  const margin = Number(process.env.MARGIN ?? 0.002)
  const mattingOpts = JSON.parse(process.env.MATTING ?? '{}')
  for (const d of data) {
    const line: string[] = []
    const chosen = pick(d.views, among, margin)
    const scored: Record<string, Float32Array> = {}
    const toF = (m: Uint8Array) => Float32Array.from(m, (v) => v / 255)
    scored.balanced = toF(d.views.sq1024)
    for (const v of (process.env.SINGLES ?? '').split(',').filter(Boolean) as View[]) scored[v] = toF(d.views[v])
    if (process.env.FAST_PICK)
      scored.fastPick = toF(d.views[pick(d.views, process.env.FAST_PICK.split(',') as View[], 0)])
    scored.pick = toF(d.views[chosen])
    const t0 = performance.now()
    const matte = mattingSolve(d.image, { data: d.views[chosen], width: d.width, height: d.height }, mattingOpts)
    const ms = performance.now() - t0
    scored.pickMat = toF(matte.data)
    scored.balMat = toF(
      mattingSolve(d.image, { data: d.views.sq1024, width: d.width, height: d.height }, mattingOpts).data,
    )
    for (const [name, est] of Object.entries(scored)) {
      const s = matting(est, d.truth, d.width, d.height)
      sums[name] = (sums[name] ?? 0) + s.sad / data.length
      sums[`${name}:grad`] = (sums[`${name}:grad`] ?? 0) + s.grad / data.length
      line.push(`${name} ${s.sad.toFixed(1)}/${s.grad.toFixed(2)}`)
    }
    process.stdout.write(`${d.name} [${chosen}, matting ${ms.toFixed(0)} ms]: ${line.join(' | ')}\n`)
  }
  process.stdout.write(
    `MEAN: ${Object.entries(sums)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(' | ')}\n`,
  )
}
