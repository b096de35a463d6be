/**
 * The refinement benchmark (part of `npm run bench -- all`, or alone: `npm run bench -- refinement`). On
 * composites whose true alpha is known and where the model errs (bench/lib/placed.ts: a subject
 * placed in a busy scene), it scores against the truth:
 * - base: the model's mask of the whole composite (the `balanced` mask, what a project starts from);
 * - box: one refinement with a box around the subject (its true bounding box plus 5 % of the
 *   frame's longer side: the box a user draws around what the mask got wrong);
 * - points: one refinement with three points, placed automatically where the base is most wrong:
 *   in each of the three largest error blobs (foreground where truth ≥ 0.5 and the mask < 128,
 *   background where truth < 0.5 and the mask ≥ 128), at the blob's innermost pixel;
 * and, to choose the method, each with the steps of inference-server/src/refinement/ switched on
 * alone and together: (a) the zoomed second look, (b) points (islands + colour cut), (a)+(b).
 * The refinement code is called directly (no HTTP): the route adds only decoding and encoding.
 * SAD and gradient error are in thousands, as in bench/quality-synthetic.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { Box, RefineRequest, RefinementPoint } from '../src/contract/editing.js'
import { decodeImage } from '../inference-server/src/imaging/decode.js'
import type { Mask } from '../inference-server/src/imaging/types.js'
import { label } from '../inference-server/src/refinement/components.js'
import { refineMask, type RefineMethod } from '../inference-server/src/refinement/index.js'
import { removeBackground } from '../inference-server/src/remove.js'
import { createSegmenter, type Segmenter } from '../inference-server/src/segmentation/index.js'
import { sharp } from './lib/deps.js'
import { FIXTURE_PHOTOS, fixturePhoto } from './lib/images.js'
import { type PlacedCase, type PlacedComposite, placedComposite } from './lib/placed.js'
import { machineInfo, RESULTS_DIR, round } from './lib/util.js'
import { gradientMagnitude } from './lib/matting-metrics.js'

export const REFINEMENT_SIZES = { '4mp': [2448, 1632], '12mp': [4240, 2832] } as const
type Size = keyof typeof REFINEMENT_SIZES

/** Subjects placed in scenes with salient things of their own (chosen so the model errs; see the module doc). */
export const CASES: PlacedCase[] = [
  { fg: 'astronaut.png', bg: 'coffee.png', scale: 0.5, x: 0.1, y: 0.5 },
  { fg: 'coffee.png', bg: 'astronaut.png', scale: 0.4, x: 0.5, y: 0.55 },
  { fg: 'coffee.png', bg: 'chelsea.png', scale: 0.45, x: 0.05, y: 0.5 },
  { fg: 'astronaut.png', bg: 'rocket.jpg', scale: 0.45, x: 0.3, y: 0.55 },
  { fg: 'coffee.png', bg: 'rocket.jpg', scale: 0.35, x: 0.3, y: 0.6 },
  { fg: 'astronaut.png', bg: 'chelsea.png', scale: 0.6, x: 0.55, y: 0.4 },
]

const ZOOM: RefineMethod = { zoom: true, regions: false, cut: false, soften: false }
const POINTS: RefineMethod = { zoom: false, regions: true, cut: true, soften: true }
const BOTH: RefineMethod = { zoom: true, regions: true, cut: true, soften: true }
/** What runs (`DEFAULT_METHOD`) is 'box' for a box and 'points (a)+(b)' for points. */
const VARIANTS: Record<string, { request: 'box' | 'points'; method: RefineMethod }> = {
  box: { request: 'box', method: ZOOM },
  'points (a) zoom': { request: 'points', method: ZOOM },
  'points (b) regions': { request: 'points', method: { ...POINTS, cut: false } },
  'points (b) regions+cut': { request: 'points', method: POINTS },
  'points (a)+(b) without cut': { request: 'points', method: { ...BOTH, cut: false } },
  'points (a)+(b) without soften': { request: 'points', method: { ...BOTH, soften: false } },
  'points (a)+(b)': { request: 'points', method: BOTH },
}

export interface Score {
  sad: number
  grad: number
  ms?: number
}

export function score(mask: Mask, alpha: Float32Array): Score {
  const est = new Float32Array(alpha.length)
  let sad = 0
  for (let i = 0; i < est.length; i++) {
    est[i] = mask.data[i] / 255
    sad += Math.abs(est[i] - alpha[i])
  }
  const gt = gradientMagnitude(alpha, mask.width, mask.height)
  const ge = gradientMagnitude(est, mask.width, mask.height)
  let grad = 0
  for (let i = 0; i < gt.length; i++) grad += (gt[i] - ge[i]) ** 2
  return { sad: round(sad / 1000, 2), grad: round(grad / 1000, 3) }
}

/** The true subject's bounding box (alpha ≥ 0.5) grown by `margin` of the longer side, normalised. */
export function subjectBox(alpha: Float32Array, W: number, H: number, margin = 0.05): Box {
  let [x0, y0, x1, y1] = [W, H, 0, 0]
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if (alpha[y * W + x] < 0.5) continue
      x0 = Math.min(x0, x)
      y0 = Math.min(y0, y)
      x1 = Math.max(x1, x + 1)
      y1 = Math.max(y1, y + 1)
    }
  }
  const m = Math.round(margin * Math.max(W, H))
  ;[x0, y0, x1, y1] = [Math.max(0, x0 - m), Math.max(0, y0 - m), Math.min(W, x1 + m), Math.min(H, y1 + m)]
  return { x: x0 / W, y: y0 / H, width: (x1 - x0) / W, height: (y1 - y0) / H }
}

/** Chamfer (3-4) distance to the nearest pixel outside `inside`, within a w×h plane. */
function innerDistance(inside: Uint8Array, w: number, h: number): Uint16Array {
  const d = new Uint16Array(w * h)
  const at = (x: number, y: number) => (x < 0 || y < 0 || x >= w || y >= h ? 0 : d[y * w + x])
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (inside[y * w + x])
        d[y * w + x] = Math.min(at(x - 1, y) + 3, at(x, y - 1) + 3, at(x - 1, y - 1) + 4, at(x + 1, y - 1) + 4)
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      const i = y * w + x
      if (inside[i])
        d[i] = Math.min(d[i], at(x + 1, y) + 3, at(x, y + 1) + 3, at(x + 1, y + 1) + 4, at(x - 1, y + 1) + 4)
    }
  }
  return d
}

/**
 * `n` points at the base mask's largest error blobs, each at its innermost pixel, labelled by the truth.
 */
export function autoPoints(base: Mask, alpha: Float32Array, n = 3): RefinementPoint[] {
  const { width: W, height: H } = base
  const blobs: { area: number; foreground: boolean; labels: Int32Array; id: number }[] = []
  for (const foreground of [true, false]) {
    const wrong = new Uint8Array(W * H)
    for (let i = 0; i < wrong.length; i++) {
      wrong[i] = foreground ? +(alpha[i] >= 0.5 && base.data[i] < 128) : +(alpha[i] < 0.5 && base.data[i] >= 128)
    }
    const parts = label(wrong, W, H)
    const areas = new Float64Array(parts.count + 1)
    for (const l of parts.labels) areas[l]++
    for (let id = 1; id <= parts.count; id++) blobs.push({ area: areas[id], foreground, labels: parts.labels, id })
  }
  blobs.sort((a, b) => b.area - a.area)
  return blobs.slice(0, n).map(({ labels, id, foreground }) => {
    const inside = new Uint8Array(W * H)
    for (let i = 0; i < inside.length; i++) inside[i] = labels[i] === id ? 1 : 0
    const d = innerDistance(inside, W, H)
    let best = 0
    for (let i = 1; i < d.length; i++) if (d[i] > d[best]) best = i
    const x = best % W
    const y = Math.floor(best / W)
    return { x: (x + 0.5) / W, y: (y + 0.5) / H, label: foreground ? 'foreground' : 'background' }
  })
}

/** Each fixture's own model mask at its own size: the subject's true alpha. */
async function fixtureAlphas(model: Segmenter) {
  const masks = new Map<string, { data: Uint8Array; width: number; height: number }>()
  for (const name of FIXTURE_PHOTOS) {
    const photo = await fixturePhoto(name)
    const r = await removeBackground(model, photo.bytes, {
      quality: 'balanced',
      alpha: { mode: 'raw', feather: 0 },
      output: 'mask',
    })
    const data = new Uint8Array((await sharp(r.png).extractChannel(0).raw().toBuffer()).buffer)
    masks.set(name, { data, width: photo.width, height: photo.height })
  }
  return masks
}

/** A 1/4-size PNG of a mask, for looking at (`--save`). */
const preview = (m: Mask, file: string) =>
  sharp(m.data, { raw: { width: m.width, height: m.height, channels: 1 } })
    .resize(Math.round(m.width / 4))
    .toColourspace('b-w')
    .png()
    .toFile(file)

/** The variants whose name contains `filter` (all without one). */
const variants = (filter?: string) => Object.entries(VARIANTS).filter(([name]) => !filter || name.includes(filter))

async function runComposite(
  model: Segmenter,
  c: PlacedComposite,
  log: (m: string) => void,
  save?: string,
  filter?: string,
) {
  const { image } = await decodeImage(c.bytes)
  const t0 = performance.now()
  const base = await model.segment(image)
  if (save) {
    await sharp(c.bytes)
      .resize(Math.round(c.width / 4))
      .png()
      .toFile(`${save}/${c.name}-photo.png`)
    const truth = Uint8Array.from(c.alpha, (a) => Math.round(a * 255))
    await preview({ data: truth, width: c.width, height: c.height }, `${save}/${c.name}-truth.png`)
    await preview(base, `${save}/${c.name}-base.png`)
  }
  const row: Record<string, unknown> = { name: c.name, width: c.width, height: c.height }
  row.base = { ...score(base, c.alpha), ms: round(performance.now() - t0, 0) }
  const requests: Record<'box' | 'points', RefineRequest> = {
    box: { box: subjectBox(c.alpha, c.width, c.height) },
    points: { points: autoPoints(base, c.alpha) },
  }
  row.requests = requests
  for (const [name, v] of variants(filter)) {
    const started = performance.now()
    const { mask } = await refineMask(model, image, base, requests[v.request], { method: v.method })
    row[name] = { ...score(mask, c.alpha), ms: round(performance.now() - started, 0) }
    if (save) await preview(mask, `${save}/${c.name}-${name.replace(/\W+/g, '_')}.png`)
  }
  log(`${c.name}: ${JSON.stringify(row)}`)
  return row
}

export async function runRefinementBench({
  sizes = ['4mp', '12mp'] as Size[],
  only,
  save,
  filter,
  log = (m: string) => process.stderr.write(`${m}\n`),
}: {
  sizes?: Size[]
  only?: string
  save?: string
  /** Only the variants whose name contains this (e.g. `(a)+(b)`). */
  filter?: string
  log?: (m: string) => void
} = {}) {
  const model = await createSegmenter()
  const rows: Record<string, unknown>[] = []
  try {
    const masks = await fixtureAlphas(model)
    for (const size of sizes) {
      const [W, H] = REFINEMENT_SIZES[size]
      for (const c of CASES) {
        const composite = await placedComposite(c, masks, W, H, size)
        if (only && !composite.name.includes(only)) continue
        rows.push(await runComposite(model, composite, log, save, filter))
      }
    }
  } finally {
    await model.close()
  }
  const sad = (r: Record<string, unknown>, k: string) => (r[k] as Score).sad
  const mean = (k: string, xs: Record<string, unknown>[]) => round(xs.reduce((a, r) => a + sad(r, k), 0) / xs.length, 2)
  const keys = ['base', ...variants(filter).map(([name]) => name)]
  const bySize = Object.fromEntries(
    sizes.map((size) => {
      const xs = rows.filter((r) => (r.name as string).endsWith(size))
      return [size, Object.fromEntries(keys.map((k) => [k, xs.length ? mean(k, xs) : null]))]
    }),
  )
  return {
    method: {
      truth: "each fixture's own model mask, placed and upscaled, crisp at its 0.5 contour (bench/lib/placed.ts)",
      box: 'the true subject box + 5 % of the longer side',
      points: '3 points at the innermost pixels of the 3 largest error blobs of the base mask, labelled by the truth',
      variants: VARIANTS,
    },
    composites: rows,
    meanSad: Object.fromEntries(keys.map((k) => [k, mean(k, rows)])),
    meanSadBySize: bySize,
    boxLowersSadOnEveryComposite: keys.includes('box') ? rows.every((r) => sad(r, 'box') < sad(r, 'base')) : null,
    pointsLowerSadOnEveryComposite: keys.includes('points (a)+(b)')
      ? rows.every((r) => sad(r, 'points (a)+(b)') < sad(r, 'base'))
      : null,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      name: { type: 'string', default: 'latest' },
      size: { type: 'string' },
      only: { type: 'string' },
      save: { type: 'string' },
      variants: { type: 'string' },
    },
  })
  const result = await runRefinementBench({
    sizes: values.size ? [values.size as Size] : undefined,
    only: values.only,
    save: values.save,
    filter: values.variants,
  })
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}refinement-${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stderr.write(`${JSON.stringify(result.meanSad, null, 2)}\nwrote ${file}\n`)
}
