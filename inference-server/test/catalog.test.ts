/**
 * Catalog images with the real model (DESIGN.md §3 Catalog images; issue "Done when"): through
 * `POST /v1/catalog` and the CPU generator directly (with `inspect`, which hands back the placed
 * subjects and the shadow plane). The product is coffee.png enlarged to ~1 MP (1224×816), so its
 * subject needs no super-resolution at 1024²; the super-resolution path gets a 200 px reference
 * into a 2048² canvas. The fork's model (shared-model.ts) and one generator for the file; the
 * segmenter remembers each reference's mask (remembered-masks.ts), as what is tested here is what
 * comes after it, except for the first test's second request, which runs the model again.
 */
import { createHash } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CatalogOptions,
  CatalogOptionsSchema,
  type CatalogRequest,
  SUBJECT_FILL,
} from '../../src/contract/catalog.js'
import { imagePart, optionsPart, type RequestPart } from '../src/auth.js'
import { createCpuGenerator } from '../src/catalog/cpu.js'
import type { CatalogGenerator, CatalogResult, Inspection } from '../src/catalog/generator.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp } from '../src/server.js'
import { fixture, type JobAnswer, postJob, postParts } from './helpers.js'
import type { RememberingSegmenter } from './remembered-masks.js'
import { sharedModel } from './shared-model.js'

const KEY = 'catalog-test-key'
const CATALOG = '/v1/catalog'

/** The real model, remembering masks. */
let segmenter: RememberingSegmenter
/** The same model without memory: each request runs it. */
let model: Segmenter
let generator: CatalogGenerator
let app: ReturnType<typeof createApp>
/** coffee.png at 1224×816: a ~1 MP product photo. */
let product: Buffer
let others: Buffer[]

beforeAll(async () => {
  ;({ model, masks: segmenter } = await sharedModel())
  generator = createCpuGenerator()
  app = createApp({ signingKey: KEY, model: { current: segmenter }, catalog: generator })
  product = await sharp(await fixture('coffee.png'))
    .resize(1224, 816, { kernel: 'lanczos3' })
    .png()
    .toBuffer()
  others = await Promise.all(['rocket.jpg', 'astronaut.png', 'chelsea.png'].map(fixture))
})
afterAll(async () => {
  await generator?.close()
})

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const references = (images: Uint8Array[]) => images.map((bytes, i) => ({ name: `reference-${i}`, bytes }))

/** The generator directly, with the planes it composed. */
async function generate(images: Uint8Array[], options: Partial<CatalogOptions>): Promise<Required<CatalogResult>> {
  const parsed = CatalogOptionsSchema.parse({ seed: 7, ...options })
  const result = await generator.generate(references(images), parsed, { segmenter, onStage: () => {}, inspect: true })
  if (!result.inspection) throw new Error('expected an inspection')
  return result as Required<CatalogResult>
}

const catalogParts = (options: Partial<CatalogRequest>, images: Uint8Array[]): RequestPart[] => [
  optionsPart({ seed: 7, references: images.length, ...options }),
  ...images.map((bytes, i) => imagePart(bytes, `reference-${i}`)),
]

/** The one `result` output of a successful answer, checked against the protocol. */
function resultOf(answer: JobAnswer, width = 1024, height = 1024): Uint8Array {
  expect(answer.error).toBeUndefined()
  expect(answer.stages).toEqual(['segmenting', 'rendering'])
  expect(answer.frames.map((f) => f.type)).toEqual(['stage', 'stage', 'output', 'done'])
  expect(answer.outputs[0]).toMatchObject({ name: 'result', contentType: 'image/png', width, height })
  return answer.outputs[0].bytes
}

async function rgbOf(png: Uint8Array) {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true })
  expect(info.channels).toBe(3)
  return { data, width: info.width, height: info.height }
}

/** The subjects' alpha on the canvas (the layers pasted at their rectangles). */
function canvasAlpha({ layers }: Inspection, width: number, height: number): Uint8Array {
  const alpha = new Uint8Array(width * height)
  for (const { rect, alpha: a } of layers)
    for (let y = 0; y < rect.height; y++)
      for (let x = 0; x < rect.width; x++) {
        const v = a[y * rect.width + x]
        if (v) alpha[(rect.y + y) * width + rect.x + x] = v
      }
  return alpha
}

/** The tight box of alpha ≥ 8. */
function boxOf(alpha: Uint8Array, width: number) {
  let x0 = Number.POSITIVE_INFINITY
  let y0 = Number.POSITIVE_INFINITY
  let x1 = -1
  let y1 = -1
  for (let i = 0; i < alpha.length; i++) {
    if (alpha[i] < 8) continue
    const x = i % width
    const y = (i - x) / width
    x0 = Math.min(x0, x)
    x1 = Math.max(x1, x)
    y0 = Math.min(y0, y)
    y1 = Math.max(y1, y)
  }
  return { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 }
}

/**
 * Pixels that are not exactly the background although neither subject nor shadow covers them,
 * and pixels off the background outside the subjects' boxes and above their lower halves (where
 * a floor shadow cannot be): both must be none.
 */
async function strayPixels(result: Required<CatalogResult>) {
  const { data, width, height } = await rgbOf(result.png)
  const { shade, background, layers } = result.inspection
  const alpha = canvasAlpha(result.inspection, width, height)
  const floor = Math.min(...layers.map((l) => l.rect.y + l.rect.height / 2))
  const inBox = (x: number, y: number) =>
    layers.some(({ rect: r }) => x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
  let uncovered = 0
  let misplaced = 0
  let plain = 0
  for (let k = 0; k < alpha.length; k++) {
    const isBackground =
      data[k * 3] === background[0] && data[k * 3 + 1] === background[1] && data[k * 3 + 2] === background[2]
    if (isBackground) plain++
    if (!alpha[k] && !shade?.[k] && !isBackground) uncovered++
    const x = k % width
    const y = (k - x) / width
    if (!isBackground && !inBox(x, y) && y < floor) misplaced++
  }
  return { uncovered, misplaced, plainShare: plain / alpha.length }
}

describe('POST /v1/catalog (CPU generator, real model)', () => {
  let first: Uint8Array

  it('answers a PNG of exactly width×height, the same bytes for the same references and seed', async () => {
    const parts = catalogParts({ shadow: 'soft' }, [product])
    const a = await postJob(app, KEY, CATALOG, parts)
    // The second request runs the model again: the same bytes include the same mask.
    const fresh = createApp({ signingKey: KEY, model: { current: model }, catalog: generator })
    const b = await postJob(fresh, KEY, CATALOG, parts)
    first = resultOf(a)
    expect(a.headers.get('x-model-version')).toMatch(/^catalog-cpu@1\+isnet-general@.+\+esrgan-slim@1\.0\.0$/)
    expect(a.done?.warnings).toEqual([])
    expect(Object.keys(a.done?.timings ?? {})).toEqual(
      expect.arrayContaining(['decode', 'segment', 'render', 'encode']),
    )
    // A 1 MP product needs no super-resolution at 1024².
    expect(a.done?.timings?.superResolution).toBeUndefined()
    expect(sha256(resultOf(b))).toBe(sha256(first))
    expect(await sharp(first).metadata()).toMatchObject({ format: 'png', width: 1024, height: 1024 })
  })

  it('records a prompt without interpreting it: same bytes, a notice echoing it', async () => {
    const prompt = 'Studio shot ☕️ on marble, morning light — 光'
    const answer = await postJob(app, KEY, CATALOG, catalogParts({ shadow: 'soft', prompt }, [product]))
    expect(sha256(resultOf(answer))).toBe(sha256(first))
    expect(answer.done?.warnings).toHaveLength(1)
    expect(answer.done?.warnings[0].code).toBe('prompt_not_interpreted')
    expect(answer.done?.warnings[0].message).toContain(prompt)
  })

  it('another seed moves the product and changes the shadow, never the product pixels', async () => {
    const a = await generate([product], { seed: 7, shadow: 'soft' })
    const b = await generate([product], { seed: 8, shadow: 'soft' })
    // The route's bytes are the generator's.
    expect(sha256(a.png)).toBe(sha256(first))
    expect(sha256(b.png)).not.toBe(sha256(a.png))
    const [la] = a.inspection.layers
    const [lb] = b.inspection.layers
    expect(Buffer.from(lb.rgb).equals(Buffer.from(la.rgb))).toBe(true)
    expect(Buffer.from(lb.alpha).equals(Buffer.from(la.alpha))).toBe(true)
    expect([lb.rect.width, lb.rect.height]).toEqual([la.rect.width, la.rect.height])
    expect(b.inspection.light).not.toEqual(a.inspection.light)
    // A small offset: at most 1 % of the side each way.
    expect(Math.abs(lb.rect.x - la.rect.x)).toBeLessThanOrEqual(21)
    expect(Math.abs(lb.rect.y - la.rect.y)).toBeLessThanOrEqual(21)
    const ca = await rgbOf(a.png)
    const cb = await rgbOf(b.png)
    // Inside the mask (alpha 255) both canvases hold the scaled, balanced cutout's own colours.
    let compared = 0
    let differ = 0
    for (let y = 0; y < la.rect.height; y++)
      for (let x = 0; x < la.rect.width; x++) {
        const k = y * la.rect.width + x
        if (la.alpha[k] !== 255) continue
        const pa = ((la.rect.y + y) * 1024 + la.rect.x + x) * 3
        const pb = ((lb.rect.y + y) * 1024 + lb.rect.x + x) * 3
        compared++
        for (let c = 0; c < 3; c++)
          if (ca.data[pa + c] !== la.rgb[k * 3 + c] || cb.data[pb + c] !== la.rgb[k * 3 + c]) differ++
      }
    expect(compared).toBeGreaterThan(300_000)
    expect(differ).toBe(0)
  })

  it.each([
    { shadow: 'soft', background: '#FFFFFF', width: 1024, height: 1024 },
    { shadow: 'hard', background: '#F2E8DA', width: 1024, height: 1024 },
    { shadow: 'floating', background: '#FFFFFF', width: 1200, height: 800 },
    { shadow: 'none', background: '#202020', width: 800, height: 1200 },
  ] as const)('$shadow on $background at $width×$height: exact background, 85 % fill', async (options) => {
    const result = await generate([product], options)
    const { width, height } = await rgbOf(result.png)
    expect([width, height]).toEqual([options.width, options.height])
    const stray = await strayPixels(result)
    expect(stray.uncovered).toBe(0)
    expect(stray.misplaced).toBe(0)
    expect(stray.plainShare).toBeGreaterThan(0.3)
    if (options.shadow === 'none') expect(result.inspection.shade).toBeNull()
    else expect(result.inspection.shade?.some((s) => s > 0)).toBe(true)
    // The subject's box spans 85 % ± 3 % of the longer side, or of the side that binds.
    const box = boxOf(canvasAlpha(result.inspection, width, height), width)
    const fill = Math.max(box.width / width, box.height / height)
    expect(Math.abs(fill - SUBJECT_FILL)).toBeLessThanOrEqual(0.03)
    if (width === height)
      expect(Math.abs(Math.max(box.width, box.height) / width - SUBJECT_FILL)).toBeLessThanOrEqual(0.03)
  })

  it.each([2, 3, 4])('views with %i references: one canvas, side by side, front largest', async (count) => {
    const images = [product, ...others].slice(0, count)
    const result = await generate(images, { layout: 'views', shadow: 'soft' })
    const { layers } = result.inspection
    expect(layers).toHaveLength(count)
    expect(await sharp(result.png).metadata()).toMatchObject({ width: 1024, height: 1024 })
    for (const [i, { rect }] of layers.entries()) {
      expect(rect.x).toBeGreaterThanOrEqual(0)
      expect(rect.y).toBeGreaterThanOrEqual(0)
      expect(rect.x + rect.width).toBeLessThanOrEqual(1024)
      expect(rect.y + rect.height).toBeLessThanOrEqual(1024)
      if (i === 0) continue
      expect(rect.x).toBeGreaterThan(layers[i - 1].rect.x + layers[i - 1].rect.width)
      expect(rect.height).toBeLessThan(layers[0].rect.height)
    }
    const stray = await strayPixels(result)
    expect(stray.uncovered).toBe(0)
    expect(stray.misplaced).toBe(0)
  })

  it('hero uses only the front when more references are sent', async () => {
    const answer = await postJob(app, KEY, CATALOG, catalogParts({ shadow: 'soft' }, [product, others[0]]))
    expect(sha256(resultOf(answer))).toBe(sha256(first))
  })

  it('enlarges a small subject with super-resolution (200 px reference into 2048²)', async () => {
    const small = await sharp(await fixture('coffee.png'))
      .resize(200, 200, { fit: 'inside' })
      .png()
      .toBuffer()
    const answer = await postJob(app, KEY, CATALOG, catalogParts({ width: 2048, height: 2048 }, [small]))
    resultOf(answer, 2048, 2048)
    expect(answer.done?.timings?.superResolution).toBeGreaterThan(0)
    const lanczos = createCpuGenerator({ upscaler: null })
    const plain = await lanczos.generate(
      references([small]),
      CatalogOptionsSchema.parse({ seed: 7, width: 2048, height: 2048 }),
      { segmenter, onStage: () => {} },
    )
    expect(plain.timings.superResolution).toBeUndefined()
    expect(sha256(plain.png)).not.toBe(sha256(answer.outputs[0].bytes))
  })
})

describe('POST /v1/catalog refusals', () => {
  const text = new TextEncoder().encode('not an image, just text\n'.repeat(10))

  it('a reference that is not an image: 415 naming it', async () => {
    const answer = await postJob(app, KEY, CATALOG, catalogParts({}, [product, text]))
    expect(answer.status).toBe(200)
    expect(answer.error).toMatchObject({ code: 'unsupported_media', retryable: false })
    expect(answer.error?.message).toMatch(/^references\.1: Expected JPEG/)
    expect(answer.outputs).toHaveLength(0)
  })

  it('a reference under 32×32: 400 naming it', async () => {
    const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#808080' } })
      .png()
      .toBuffer()
    const answer = await postJob(app, KEY, CATALOG, catalogParts({}, [tiny]))
    expect(answer.error).toMatchObject({ code: 'invalid_input' })
    expect(answer.error?.message).toMatch(/^references\.0: Expected an image of at least 32×32/)
  })

  it('a truncated back view with layout=hero (which draws only the front): 400 naming it, before any stage', async () => {
    const truncated = product.subarray(0, Math.floor(product.length / 2))
    for (const layout of ['hero', 'views'] as const) {
      const answer = await postJob(app, KEY, CATALOG, catalogParts({ layout }, [product, truncated]))
      expect(answer.error).toMatchObject({ code: 'invalid_input', retryable: false })
      expect(answer.error?.message).toMatch(/^references\.1: Could not decode image\/png image/)
      expect(answer.frames.filter((frame) => frame.type === 'stage')).toEqual([])
      expect(answer.outputs).toHaveLength(0)
    }
  })

  it('bad options and parts: 400 before the work', async () => {
    const refused = async (parts: RequestPart[]) => {
      const res = await postParts(app, KEY, CATALOG, parts)
      expect(res.status).toBe(400)
      return ((await res.json()) as { code: string; message: string }).message
    }
    expect(await refused(catalogParts({ references: 5 }, [product]))).toMatch(/references/)
    expect(await refused(catalogParts({ prompt: 'x'.repeat(4001) }, [product]))).toMatch(/prompt/)
    expect(await refused(catalogParts({ references: 2 }, [product]))).toBe('Expected a part named reference-1')
    expect(await refused([...catalogParts({}, [product]), imagePart(product, 'reference-1')])).toBe(
      'Unexpected part reference-1: options.references is 1',
    )
    expect(await refused(catalogParts({ background: 'white' } as never, [product]))).toMatch(/background/)
  })
})
