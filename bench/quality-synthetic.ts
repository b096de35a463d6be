/**
 * The SYNTHETIC quality benchmark (part of `npm run bench -- all`, or alone: `npm run bench -- quality-synthetic`):
 * it measures agreement with our own model, not accuracy against a truth someone else made. Synthetic
 * composites whose true alpha is known: each fixture photo's foreground, cut with its own model
 * mask, is laid over another fixture photo, and foreground, alpha and background are upscaled
 * (lanczos3) to 4 MP and 12 MP, so the composite I = αF + (1 − α)B has a known α and F at high
 * resolution. The upscaled alpha is made crisp again around its 0.5 contour (a ~1.5 px
 * anti-aliased edge), as an object's edge is in a real high-resolution photo; without that the
 * truth would carry no detail beyond the fixture's ~512 px, less than the model's own 1024² view. Each composite goes through the server's pipeline (removeBackground, the real model)
 * at every quality level, and we report, against the truth:
 * - SAD: Σ|α̂ − α| with α in 0..1, in thousands (the matting benchmarks' unit);
 * - gradient error: Σ(|∇α̂| − |∇α|)² with Gaussian-smoothed (σ = 1.4) central-difference gradients,
 *   in thousands (the gradients are per pixel, so this is small at high resolution: compare levels);
 * - edge colour error (cutouts): the mean |F̂ − F| over the edge band (0 < α < 1), weighted by α,
 *   in 8-bit units: how much background colour is left in the cutout's edges.
 * `--oracle` replaces the model with "a perfect model at 1024²" (the true alpha reduced to the
 * model's input size and brought back with the same bilinear), which isolates what source-resolution
 * refinement can recover; used while tuning, never reported as the result.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { removeBackground, type RemoveResult } from '../inference-server/src/remove.js'
import { createSegmenter, type Segmenter } from '../inference-server/src/segmentation/index.js'
import { toSourceMask } from '../inference-server/src/segmentation/postprocess.js'
import type { Quality } from '../inference-server/src/options.js'
import { sharp } from './lib/deps.js'
import { type Composite, fixtureMasks, floatPlane, makeComposites, QUALITY_SIZES } from './lib/composites.js'
import { edgeColourError, gradientMagnitude } from './lib/matting-metrics.js'
import { machineInfo, RESULTS_DIR, round } from './lib/util.js'

/** Said in every report: these numbers measure agreement with the model, not accuracy. */
const SYNTHETIC_TRUTH =
  "synthetic: the truth is the model's own mask of a small fixture photo, upscaled; this measures agreement with the model at a scale it never saw, not accuracy (real photos: issue 22)"

const LEVELS: Quality[] = ['fast', 'balanced', 'high']

export interface Scores {
  sad: number
  grad: number
  /** Only for cutouts. */
  edgeColour?: number
  /** Cutout time (decode, model runs, refinement, decontamination, encode). */
  ms: number
  modelRuns?: number
}

/** Scores `mask` (a mask PNG, or a cutout whose alpha is the mask) and the cutout's edge colour. */
export async function score(c: Composite, mask: RemoveResult, cutout?: RemoveResult): Promise<Scores> {
  const m = await floatPlane(mask.png, mask === cutout ? 'alpha' : 1)
  const est = new Float32Array(m.length)
  let sad = 0
  for (let i = 0; i < m.length; i++) {
    est[i] = m[i] / 255
    sad += Math.abs(est[i] - c.alpha[i])
  }
  const [gt, ge] = [gradientMagnitude(c.alpha, c.width, c.height), gradientMagnitude(est, c.width, c.height)]
  let grad = 0
  for (let i = 0; i < gt.length; i++) grad += (gt[i] - ge[i]) ** 2
  const out: Scores = {
    sad: round(sad / 1000, 2),
    grad: round(grad / 1000, 3),
    ms: round(mask.timings.decode + mask.timings.segment + mask.timings.alpha + mask.timings.encode, 0),
    modelRuns: mask.modelRuns,
  }
  if (cutout) out.edgeColour = edgeColourError(c, await floatPlane(cutout.png, 4))
  return out
}

/** "A perfect model at 1024²": the true alpha reduced to the model's input and brought back. */
function oracleSegmenter(composites: Composite[]): Segmenter {
  return {
    version: 'oracle',
    input: { kind: 'static', native: { width: 1024, height: 1024 } },
    async segment(image) {
      const c = composites.find(
        (x) => x.width === image.width && x.height === image.height && (x as { current?: boolean }).current,
      )!
      const a8 = new Uint8Array(c.alpha.length)
      for (let i = 0; i < a8.length; i++) a8[i] = Math.round(c.alpha[i] * 255)
      const small = await sharp(a8, { raw: { width: c.width, height: c.height, channels: 1 } })
        .resize(1024, 1024, { fit: 'fill' })
        .toColourspace('b-w')
        .raw()
        .toBuffer()
      const f = new Float32Array(small.length)
      for (let i = 0; i < f.length; i++) f[i] = small[i] / 255
      return { data: toSourceMask(f, 1024, image.width, image.height), width: image.width, height: image.height }
    },
    async close() {},
  }
}

export async function runQualityBench({
  oracle = false,
  sizes,
  levels = LEVELS,
  log = (m: string) => process.stderr.write(`${m}\n`),
}: {
  oracle?: boolean
  sizes?: (keyof typeof QUALITY_SIZES)[]
  /** Only these levels (default all); the comparisons need `balanced` and `high`. */
  levels?: Quality[]
  log?: (m: string) => void
} = {}) {
  const model = await createSegmenter()
  const composites = await makeComposites(await fixtureMasks(model), sizes)
  const segmenter = oracle ? oracleSegmenter(composites) : model
  const rows: Record<string, unknown>[] = []
  for (const c of composites) {
    ;(c as { current?: boolean }).current = true
    const row: Record<string, unknown> = { name: c.name, width: c.width, height: c.height }
    for (const quality of levels) {
      // One run per level: with raw alpha and no feather the cutout's alpha is the mask, and
      // `high` on 12 MP takes ~20 model runs, too many to pay twice.
      const cutout = await removeBackground(segmenter, c.bytes, {
        quality,
        alpha: { mode: 'raw', feather: 0 },
        output: 'cutout',
      })
      row[quality] = await score(c, cutout, cutout)
    }
    ;(c as { current?: boolean }).current = false
    log(`${c.name}: ${JSON.stringify(row)}`)
    rows.push(row)
  }
  await model.close()
  const mean = (q: Quality, k: keyof Scores, size: string) => {
    const xs = rows
      .filter((r) => (r.name as string).endsWith(size))
      .map((r) => (r[q] as Scores)[k])
      .filter((v): v is number => v !== undefined)
    return xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length, 3) : null
  }
  const summary: Record<string, unknown> = {}
  for (const size of sizes ?? Object.keys(QUALITY_SIZES)) {
    summary[size] = Object.fromEntries(
      levels.map((q) => [
        q,
        {
          sad: mean(q, 'sad', size),
          grad: mean(q, 'grad', size),
          edgeColour: mean(q, 'edgeColour', size),
          ms: mean(q, 'ms', size),
        },
      ]),
    )
  }
  if (!levels.includes('high') || !levels.includes('balanced'))
    return { truth: SYNTHETIC_TRUTH, oracle, composites: rows, meanBySize: summary }
  const highBeatsBalanced = rows.every((r) => (r.high as Scores).sad < (r.balanced as Scores).sad)
  // Issue 14's target: high ≥ 10 % lower SAD and gradient error than balanced on the 12 MP composites.
  const lower = (size: string, k: keyof Scores) => {
    const [b, h] = [mean('balanced', k, size), mean('high', k, size)]
    return b && h !== null ? round((100 * (b - h)) / b, 1) : null
  }
  const highVsBalanced = Object.fromEntries(
    (sizes ?? Object.keys(QUALITY_SIZES)).map((size) => [
      size,
      {
        sadLowerPct: lower(size, 'sad'),
        gradLowerPct: lower(size, 'grad'),
        edgeColourLowerPct: lower(size, 'edgeColour'),
        extraMs: round((mean('high', 'ms', size) ?? 0) - (mean('balanced', 'ms', size) ?? 0), 0),
      },
    ]),
  )
  const t12 = highVsBalanced['12mp'] as { sadLowerPct: number | null; gradLowerPct: number | null } | undefined
  return {
    truth: SYNTHETIC_TRUTH,
    oracle,
    composites: rows,
    meanBySize: summary,
    highBeatsBalancedInSadOnEveryComposite: highBeatsBalanced,
    highVsBalanced,
    target: {
      rule: 'high ≥ 10 % lower SAD and gradient error than balanced on the 12 MP composites (mask time, mean)',
      ok: t12 ? (t12.sadLowerPct ?? 0) >= 10 && (t12.gradLowerPct ?? 0) >= 10 : null,
    },
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      oracle: { type: 'boolean', default: false },
      name: { type: 'string', default: 'latest' },
      size: { type: 'string' },
      levels: { type: 'string' },
    },
  })
  const result = await runQualityBench({
    oracle: values.oracle,
    levels: values.levels ? (values.levels.split(',') as Quality[]) : undefined,
    sizes: values.size ? [values.size as keyof typeof QUALITY_SIZES] : undefined,
  })
  const report = { name: values.name, date: new Date().toISOString(), machine: machineInfo(), ...result }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = `${RESULTS_DIR}quality-synthetic-${values.oracle ? 'oracle-' : ''}${values.name}.json`
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stderr.write(`${JSON.stringify(result.meanBySize, null, 2)}\nwrote ${file}\n`)
}
