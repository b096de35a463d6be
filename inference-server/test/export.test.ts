/**
 * `POST /v1/export` through the HTTP app: every format opens with its own reader (sharp, fflate,
 * ag-psd), and the recipe's crop (specks ignored), margin (not clamped to the photo), contain fit
 * and background land where DESIGN.md §3 Exports says. The photo is a real fixture; the mask is
 * synthetic, so the expected boxes are known. No model runs.
 */
import { createHash } from 'node:crypto'
import { initializeCanvas, readPsd } from 'ag-psd'
import { unzipSync } from 'fflate'
import sharp from 'sharp'
import { beforeAll, describe, expect, it } from 'vitest'
import { EXPORT_CONTENT_TYPES, type ExportFormat, type Recipe } from '../../src/contract/editing.js'
import { imagePart, optionsPart } from '../src/auth.js'
import { resizeMask } from '../src/imaging/mask-part.js'
import { subjectBox } from '../src/render/crop.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { createApp } from '../src/server.js'
import { fixture, type JobAnswer, postJob, postParts, rawPng, STUB_INPUT } from './helpers.js'

const KEY = 'export-test-key'
const EXPORT = '/v1/export'
const SIZE = 512
/** The subject: a 200×200 square; plus a 2×2 speck far from it (4 px, under 0.1 % of 40,004). */
const SUBJECT = { x: 100, y: 150, width: 200, height: 200 }
const SPECK = { x: 10, y: 10, width: 2, height: 2 }

const stubSegmenter: Segmenter = {
  version: 'stub@1',
  input: STUB_INPUT,
  segment: async () => {
    throw new Error('the editing routes run no model')
  },
  async close() {},
}

const app = createApp({ signingKey: KEY, model: { current: stubSegmenter } })

function maskWith(rects: Array<typeof SUBJECT>, width = SIZE, height = SIZE): Uint8Array {
  const data = new Uint8Array(width * height)
  for (const r of rects)
    for (let y = r.y; y < r.y + r.height; y++) data.fill(255, y * width + r.x, y * width + r.x + r.width)
  return data
}

const greyPng = (data: Uint8Array, width = SIZE, height = SIZE) =>
  sharp(data, { raw: { width, height, channels: 1 } })
    .toColourspace('b-w')
    .png()
    .toBuffer()

// ag-psd's reader makes its pixel buffers through a canvas unless given a way to make them; with
// `useImageData` it needs nothing else from one (the server's writer needs none at all).
initializeCanvas(
  () => {
    throw new Error('no canvas in tests')
  },
  (width, height) => ({ data: new Uint8ClampedArray(width * height * 4), width, height }) as never,
)

let photo: Buffer
let photoRgb: Buffer
let mask: Buffer

beforeAll(async () => {
  photo = await fixture('astronaut.png')
  photoRgb = await sharp(photo).removeAlpha().raw().toBuffer()
  mask = await greyPng(maskWith([SUBJECT, SPECK]))
})

const exportOf = (format: ExportFormat, recipe: Recipe, maskPng: Uint8Array = mask): Promise<JobAnswer> =>
  postJob(app, KEY, EXPORT, [optionsPart({ format, recipe }), imagePart(photo), imagePart(maskPng, 'mask')])

/** The answer's result, checked against the protocol: stage, one output of the format's type, done. */
function resultOf(answer: JobAnswer, format: ExportFormat, width: number, height: number): Uint8Array {
  expect(answer.error).toBeUndefined()
  expect(answer.stages).toEqual(['rendering'])
  expect(answer.frames.map((f) => f.type)).toEqual(['stage', 'output', 'done'])
  const [output] = answer.outputs
  expect(output).toMatchObject({ name: 'result', contentType: EXPORT_CONTENT_TYPES[format], width, height })
  return output.bytes
}

const rgbaOf = async (bytes: Uint8Array) => {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

/** Colours equal within JPEG's loss. */
function expectNear(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = 24): void {
  for (let c = 0; c < expected.length; c++)
    expect(Math.abs(actual[c] - expected[c]), `channel ${c}`).toBeLessThan(tolerance)
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const V1 = { version: 1 } as const

describe('POST /v1/export formats', () => {
  it('png: the RGBA cutout at the photo size', async () => {
    const png = await rawPng(resultOf(await exportOf('png', V1), 'png', SIZE, SIZE))
    expect(png).toMatchObject({ width: SIZE, height: SIZE, channels: 4 })
    const at = (x: number, y: number) => (y * SIZE + x) * 4
    expect(png.data[at(200, 250) + 3]).toBe(255)
    // Inside the subject, the photo's own colours, untouched.
    const rgb = (250 * SIZE + 200) * 3
    expect([...png.data.subarray(at(200, 250), at(200, 250) + 3)]).toEqual([...photoRgb.subarray(rgb, rgb + 3)])
    expect(png.data[at(400, 50) + 3]).toBe(0)
    expect(png.data[at(10, 10) + 3]).toBe(255) // the speck is still there: only crop ignores it
  })

  it('webp: lossless with transparency, lossy when opaque', async () => {
    const clear = resultOf(await exportOf('webp', V1), 'webp', SIZE, SIZE)
    expect(await sharp(clear).metadata()).toMatchObject({ format: 'webp', width: SIZE, height: SIZE, hasAlpha: true })
    const rgba = await rgbaOf(clear)
    expect(rgba.data[(250 * SIZE + 200) * 4 + 3]).toBe(255)
    expect(rgba.data[(50 * SIZE + 400) * 4 + 3]).toBe(0)
    const opaque = resultOf(
      await exportOf('webp', { ...V1, background: { type: 'color', color: '#00FF00' } }),
      'webp',
      SIZE,
      SIZE,
    )
    expect(await sharp(opaque).metadata()).toMatchObject({ format: 'webp', hasAlpha: false })
    // Lossy of the same size is far smaller than the lossless cutout would be.
    expect(opaque.byteLength).toBeLessThan(clear.byteLength)
  })

  it('jpeg: flattened on white when transparent', async () => {
    const jpeg = resultOf(await exportOf('jpeg', V1), 'jpeg', SIZE, SIZE)
    expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: SIZE, height: SIZE, channels: 3 })
    const { data } = await rgbaOf(jpeg)
    const corner = [...data.subarray((50 * SIZE + 450) * 4, (50 * SIZE + 450) * 4 + 3)]
    for (const c of corner) expect(c).toBeGreaterThan(250)
  })

  it('zip: color.jpg and alpha.png of the rendered size', async () => {
    const zip = resultOf(await exportOf('zip', { ...V1, crop: true, margin: 10 }), 'zip', 220, 220)
    const files = unzipSync(zip)
    expect(Object.keys(files).sort()).toEqual(['alpha.png', 'color.jpg'])
    expect(await sharp(files['color.jpg']).metadata()).toMatchObject({ format: 'jpeg', width: 220, height: 220 })
    const alpha = await rawPng(files['alpha.png'])
    expect(alpha).toMatchObject({ width: 220, height: 220, channels: 1 })
    expect(alpha.data[0]).toBe(0)
    expect(alpha.data[110 * 220 + 110]).toBe(255)
    // color.jpg is the photo's colours, subject or not (remove.bg's convention): not white at the margin.
    const colour = await rgbaOf(files['color.jpg'])
    const margin = [...colour.data.subarray(0, 3)]
    const source = [...photoRgb.subarray((140 * SIZE + 90) * 3, (140 * SIZE + 90) * 3 + 3)]
    expectNear(margin, source)
  })

  it('psd: Original (hidden) and Cutout with the revision as its mask; a Background layer for a colour', async () => {
    const psdBytes = resultOf(await exportOf('psd', V1), 'psd', SIZE, SIZE)
    const psd = readPsd(psdBytes, { useImageData: true })
    expect(psd).toMatchObject({ width: SIZE, height: SIZE })
    expect(psd.children?.map((l) => l.name)).toEqual(['Original', 'Cutout'])
    const [original, cutout] = psd.children ?? []
    expect(original.hidden).toBe(true)
    expect(cutout.hidden).toBeFalsy()
    expect(original.imageData).toMatchObject({ width: SIZE, height: SIZE })
    expect(cutout.mask?.imageData).toMatchObject({ width: SIZE, height: SIZE })
    const maskData = cutout.mask?.imageData?.data ?? new Uint8Array()
    expect(maskData[(250 * SIZE + 200) * 4]).toBe(255)
    expect(maskData[(50 * SIZE + 400) * 4]).toBe(0)
    // The cutout layer keeps the whole photo: the mask hides, it does not delete.
    expect(cutout.imageData?.data[(50 * SIZE + 400) * 4 + 3]).toBe(255)
    expect(cutout.imageData?.data[(50 * SIZE + 400) * 4]).toBe(photoRgb[(50 * SIZE + 400) * 3])

    const coloured = resultOf(
      await exportOf('psd', { ...V1, background: { type: 'color', color: '#336699' } }),
      'psd',
      SIZE,
      SIZE,
    )
    const withBackground = readPsd(coloured, { useImageData: true })
    expect(withBackground.children?.map((l) => l.name)).toEqual(['Background', 'Original', 'Cutout'])
    expect([...(withBackground.children?.[0].imageData?.data.subarray(0, 4) ?? [])]).toEqual([0x33, 0x66, 0x99, 255])
  })

  it('gives the same bytes for the same request, in every format', async () => {
    const recipe: Recipe = {
      ...V1,
      crop: true,
      margin: 15,
      width: 300,
      height: 200,
      background: { type: 'color', color: '#FFCC0080' },
    }
    for (const format of ['png', 'webp', 'jpeg', 'zip', 'psd'] as const) {
      const [a, b] = [await exportOf(format, recipe), await exportOf(format, recipe)]
      expect(sha256(b.outputs[0].bytes), format).toBe(sha256(a.outputs[0].bytes))
    }
  })
})

describe('POST /v1/export recipes', () => {
  it('crops to the subject (ignoring the speck), adds the margin and fills it with the colour', async () => {
    const recipe: Recipe = { ...V1, crop: true, margin: 20, background: { type: 'color', color: '#FF0000' } }
    const [width, height] = [SUBJECT.width + 40, SUBJECT.height + 40]
    const jpeg = resultOf(await exportOf('jpeg', recipe), 'jpeg', width, height)
    const { data, ...size } = await rgbaOf(jpeg)
    expect(size).toEqual({ width, height })
    const red = (x: number, y: number) => {
      const i = (y * width + x) * 4
      expect(data[i], `R at ${x},${y}`).toBeGreaterThan(235)
      expect(data[i + 1], `G at ${x},${y}`).toBeLessThan(25)
      expect(data[i + 2], `B at ${x},${y}`).toBeLessThan(25)
    }
    for (let k = 0; k < width; k += 7) {
      red(k, 0)
      red(k, height - 1)
      red(0, k)
      red(width - 1, k)
    }
    // Inside the subject, the photo: source (200, 250) is canvas (200 − 80, 250 − 130).
    const i = (120 * width + 120) * 4
    const source = photoRgb.subarray((250 * SIZE + 200) * 3, (250 * SIZE + 200) * 3 + 3)
    expectNear(data.subarray(i, i + 3), source)
  })

  it('grows the canvas past the photo when the margin reaches beyond it (background there)', async () => {
    const edge = await greyPng(maskWith([{ x: 0, y: 0, width: 100, height: 50 }]))
    const png = await rawPng(resultOf(await exportOf('png', { ...V1, crop: true, margin: 30 }, edge), 'png', 160, 110))
    const alphaAt = (x: number, y: number) => png.data[(y * 160 + x) * 4 + 3]
    expect(alphaAt(5, 5)).toBe(0) // beyond the photo: transparent
    expect(alphaAt(30, 30)).toBe(255) // the photo's (0, 0)
    expect(alphaAt(129, 79)).toBe(255)
    expect(alphaAt(130, 80)).toBe(0) // the photo, outside the subject
  })

  it('fits inside width×height (contain, centred) and scales to one side keeping the aspect', async () => {
    const png = await rawPng(resultOf(await exportOf('png', { ...V1, width: 300, height: 100 }), 'png', 300, 100))
    // 512² → 100², centred: columns 100–199 hold the photo.
    const alphaAt = (x: number, y: number) => png.data[(y * 300 + x) * 4 + 3]
    expect(alphaAt(50, 50)).toBe(0)
    expect(alphaAt(250, 50)).toBe(0)
    expect(alphaAt(150, 50)).toBe(255) // source (256, 256), inside the subject
    expect(alphaAt(110, 50)).toBe(0) // source (~51, 256), outside it

    const coloured = await exportOf('jpeg', {
      ...V1,
      width: 300,
      height: 100,
      background: { type: 'color', color: '#0000FF' },
    })
    const { data } = await rgbaOf(resultOf(coloured, 'jpeg', 300, 100))
    expect(data[(50 * 300 + 20) * 4 + 2]).toBeGreaterThan(235)
    expect(data[(50 * 300 + 20) * 4]).toBeLessThan(25)

    resultOf(await exportOf('png', { ...V1, crop: true, width: 100 }), 'png', 100, 100)
    resultOf(await exportOf('png', { ...V1, crop: true, margin: 20, height: 60 }), 'png', 60, 60)
    resultOf(await exportOf('png', { ...V1, height: 64 }, await greyPng(maskWith([SUBJECT]))), 'png', 64, 64)
  })

  it('keeps the whole image when the mask holds no subject, and scales a mask of another size', async () => {
    const empty = await greyPng(new Uint8Array(SIZE * SIZE))
    resultOf(await exportOf('png', { ...V1, crop: true }, empty), 'png', SIZE, SIZE)
    // A 256² mask is scaled to the 512² photo first: the square doubles, its edge blended over a pixel.
    const small = maskWith([{ x: 50, y: 75, width: 100, height: 100 }], 256, 256)
    const scaled = subjectBox(resizeMask({ data: small, width: 256, height: 256 }, SIZE, SIZE))
    expect(scaled).toEqual({ x: 99, y: 149, width: 202, height: 202 })
    resultOf(await exportOf('png', { ...V1, crop: true }, await greyPng(small, 256, 256)), 'png', 202, 202)
  })

  it('refuses bad options with 400 and a recipe over the render limit in an error frame', async () => {
    const refused = async (options: unknown) => {
      const res = await postParts(app, KEY, EXPORT, [optionsPart(options), imagePart(photo), imagePart(mask, 'mask')])
      expect(res.status).toBe(400)
      return ((await res.json()) as { code: string; message: string }).message
    }
    expect(await refused({ format: 'gif', recipe: V1 })).toBe(
      'Invalid option: expected one of "png"|"webp"|"jpeg"|"zip"|"psd" for format',
    )
    expect(await refused({ format: 'png', recipe: { ...V1, background: { type: 'color', color: 'red' } } })).toBe(
      'Expected #RRGGBB or #RRGGBBAA for recipe.background.color',
    )
    const noMask = await postParts(app, KEY, EXPORT, [optionsPart({ format: 'png', recipe: V1 }), imagePart(photo)])
    expect(await noMask.json()).toMatchObject({ code: 'invalid_input', message: 'Expected a part named mask' })
    const huge = await exportOf('png', { ...V1, width: 10_000, height: 10_000 })
    expect(huge.error).toMatchObject({ code: 'image_too_large', retryable: false })
  })
})
