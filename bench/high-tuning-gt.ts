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
    out.push({ name: p.name, width: p.width, height: p.height, truth: p.alpha, views })
  }
  await model.close()
  return out
}

type Fuse = (views: Record<View, Uint8Array>, i: number) => number

const CANDIDATES: Record<string, Fuse> = {
  balanced: (v, i) => v.sq1024[i] / 255,
  fast: (v, i) => v.a704[i] / 255,
  a1024: (v, i) => v.a1024[i] / 255,
  a1280: (v, i) => v.a1280[i] / 255,
  sq768: (v, i) => v.sq768[i] / 255,
  meanBF: (v, i) => (v.sq1024[i] + v.sq1024f[i]) / 510,
  mean4: (v, i) => (v.sq1024[i] + v.sq1024f[i] + v.a704[i] + v.a1280[i]) / 1020,
  mean3: (v, i) => (v.sq1024[i] + v.a704[i] + v.a1280[i]) / 765,
  median3: (v, i) => {
    const xs = [v.sq1024[i], v.a704[i], v.a1280[i]].sort((a, b) => a - b)
    return xs[1] / 255
  },
  median5: (v, i) => {
    const xs = [v.sq1024[i], v.sq1024f[i], v.a704[i], v.a1280[i], v.a1280f[i]].sort((a, b) => a - b)
    return xs[2] / 255
  },
  // Confidence-weighted: each view weighted by how sure it is (|m − 0.5|), plus a small floor.
  conf4: (v, i) => {
    let s = 0
    let w = 0
    for (const k of ['sq1024', 'sq1024f', 'a704', 'a1280'] as View[]) {
      const m = v[k][i] / 255
      const c = Math.abs(m - 0.5) * 2
      const wk = 0.05 + c * c
      s += wk * m
      w += wk
    }
    return s / w
  },
  conf5: (v, i) => {
    let s = 0
    let w = 0
    for (const k of ['sq1024', 'sq1024f', 'a704', 'a1280', 'a1280f'] as View[]) {
      const m = v[k][i] / 255
      const c = Math.abs(m - 0.5) * 2
      const wk = 0.05 + c * c
      s += wk * m
      w += wk
    }
    return s / w
  },
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const data = await cachedViews(process.argv[2])
  const sums: Record<string, number> = {}
  for (const d of data) {
    const line: string[] = []
    for (const [name, fuse] of Object.entries(CANDIDATES)) {
      const est = new Float32Array(d.truth.length)
      for (let i = 0; i < est.length; i++) est[i] = fuse(d.views, i)
      const s = matting(est, d.truth, d.width, d.height)
      sums[name] = (sums[name] ?? 0) + s.sad / data.length
      line.push(`${name} ${s.sad.toFixed(1)}`)
    }
    process.stdout.write(`${d.name}: ${line.join(' | ')}\n`)
  }
  process.stdout.write(
    `MEAN: ${Object.entries(sums)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(' | ')}\n`,
  )
}
