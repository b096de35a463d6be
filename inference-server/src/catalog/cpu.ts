/**
 * The default catalog generator (DESIGN.md §3 Catalog images): no generative model, the same
 * bytes for the same references and seed. Per reference used (the front for `hero`, all for
 * `views`): decode, segment (the real model), cut the subject out (subject.ts: hero crop, edge
 * colours, neutral exposure and white balance). Then, from the seed, the light and a small
 * offset; the subjects' places (layout.ts), their scaling (scale.ts: super-resolution past 1.5×),
 * the contact shadow (shadow.ts), the canvas (compose.ts) and a PNG. The prompt is recorded (a
 * `prompt_not_interpreted` notice echoes it) but not interpreted: nothing is relit or inpainted.
 */
import sharp from 'sharp'
import type { CatalogOptions } from '../../../src/contract/catalog.js'
import type { Notice } from '../../../src/contract/frames.js'
import { composeCanvas, type Layer, parseHex } from './compose.js'
import type { CatalogGenerator, CatalogReference, CatalogResult, GenerateContext } from './generator.js'
import { drawJitter, planHero, planViews } from './layout.js'
import { seededRandom } from './random.js'
import { decodeReference } from './references.js'
import { scaleSubject } from './scale.js'
import { castShadow, drawLight, liftFor } from './shadow.js'
import { cutSubject, type Subject } from './subject.js'
import { createEsrganUpscaler, type Upscaler } from './upscale.js'
import { stepTimer } from '../timings.js'

export const CPU_GENERATOR_VERSION = 'catalog-cpu@1'

export interface CpuGeneratorOptions {
  /** The super-resolution model; null scales with lanczos3 only. Default: ESRGAN slim. */
  upscaler?: Upscaler | null
}

/** Says that the prompt was kept but not used, and echoes it. */
function promptNotice(prompt: string): Notice[] {
  if (!prompt) return []
  return [
    {
      code: 'prompt_not_interpreted',
      message: `The CPU generator recorded the prompt but does not interpret it (it composes the references as they are): ${prompt}`,
    },
  ]
}

/**
 * @example const generator = createCpuGenerator(); await generator.generate(references, options, { segmenter, onStage })
 */
export function createCpuGenerator({ upscaler = createEsrganUpscaler() }: CpuGeneratorOptions = {}): CatalogGenerator {
  return {
    backend: 'cpu',
    version: (segmenter) => `${CPU_GENERATOR_VERSION}+${segmenter.version}+${upscaler ? upscaler.version : 'lanczos3'}`,
    generate: (references, options, context) => generate(references, options, context, upscaler),
    close: async () => upscaler?.close(),
  }
}

async function generate(
  references: CatalogReference[],
  options: CatalogOptions,
  { segmenter, onStage, inspect }: GenerateContext,
  upscaler: Upscaler | null,
): Promise<CatalogResult> {
  const { timings, timed } = stepTimer()

  onStage('segmenting')
  // One reference at a time: only one full-size photo is held at once.
  const subjects: Subject[] = []
  for (const reference of options.layout === 'hero' ? references.slice(0, 1) : references) {
    const image = await timed('decode', () => decodeReference(reference))
    const mask = await timed('segment', () => segmenter.segment(image))
    subjects.push(await timed('subject', () => cutSubject(image, mask, reference.name)))
  }

  onStage('rendering')
  const canvas = { width: options.width, height: options.height }
  // The seed's draws, always in this order: the light, then the offset.
  const rand = seededRandom(options.seed)
  const light = drawLight(rand)
  const jitter = drawJitter(rand, canvas)
  const lift = liftFor(options.shadow, canvas)
  const rects =
    options.layout === 'hero'
      ? [planHero(subjects[0], canvas, jitter, lift)]
      : planViews(subjects, canvas, jitter, lift)

  const layers: Layer[] = []
  for (const [i, rect] of rects.entries()) {
    const scaled = await timed('scale', () => scaleSubject(subjects[i], rect, upscaler))
    if (scaled.superResolution) timings.superResolution = (timings.superResolution ?? 0) + scaled.superResolution.ms
    layers.push({ rect, rgb: scaled.rgb, alpha: scaled.alpha })
  }
  const background = parseHex(options.background)
  const { rgb, shade } = await timed('render', () => {
    const shade = castShadow(canvas, layers, options.shadow, light)
    return { rgb: composeCanvas(canvas, background, shade, layers), shade }
  })
  const png = await timed('encode', () =>
    sharp(rgb, { raw: { ...canvas, channels: 3 } })
      .png({ compressionLevel: 6, adaptiveFiltering: false })
      .toBuffer(),
  )
  for (const step of Object.keys(timings)) timings[step] = Math.round(timings[step] * 10) / 10
  return {
    png,
    ...canvas,
    warnings: promptNotice(options.prompt),
    timings,
    inspection: inspect
      ? {
          subjects: subjects.map(({ box, balance, width, height }) => ({ box, balance, width, height })),
          layers,
          shade,
          background,
          light,
        }
      : undefined,
  }
}
