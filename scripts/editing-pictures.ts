/**
 * `npx tsx scripts/editing-pictures.ts`: the pictures of docs/editing.md. The inference server's
 * app runs in-process with the real segmentation model, and every mask and export comes from its
 * routes, called with signed requests as the edge calls them: `/v1/remove` (the removal job),
 * `/v1/revise` with no strokes (revision 1, as `POST /v1/projects` makes it), `/v1/revise` with
 * strokes (`POST …/revisions`) and `/v1/export` (`POST …/exports`). Only the presentation is made
 * here: downscaling, a checkerboard under transparent pixels, strokes drawn over the photo, panels
 * side by side with a 1 px frame. Writes docs/editing/*.{jpg,png} (small, committed) and prints
 * what each route answered.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { unzipSync } from 'fflate'
import type { ExportFormat, Recipe, Stroke } from '../src/contract/editing.js'
import { FRAMES_CONTENT_TYPE, type OutputFrame, readFrames } from '../src/contract/frames.js'
import type { RemoveRequest } from '../src/contract/options.js'
import { imagePart, optionsPart, type RequestPart, signedRequest } from '../inference-server/src/auth.js'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { createApp } from '../inference-server/src/server.js'

// The inference server's own sharp (the root node_modules holds an older one that miniflare brings).
const sharp = createRequire(new URL('../inference-server/package.json', import.meta.url))(
  'sharp',
) as typeof import('sharp').default

const FIXTURES = fileURLToPath(new URL('../inference-server/test/fixtures/', import.meta.url))
const OUT = fileURLToPath(new URL('../docs/editing/', import.meta.url))
const KEY = 'editing-pictures'
/** The widest a committed picture gets; a pair of panels shares it. */
const MAX_WIDTH = 640
const GAP = 8
const PAGE = '#FFFFFF'
const FRAME = '#9A9A9A'
const LIGHT_GREY = '#E6E6E6'

/** The removal options of the README's walkthrough (`POST /v1/removals`). */
const REMOVAL: RemoveRequest = { quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' }

/**
 * Strokes in source pixels (converted to the API's 0–1 below), placed by looking at revision 1:
 * chelsea.png's right ear and chin came back half transparent; beside the right cheek a smear of
 * the blurred background came along with the whiskers.
 */
const CHELSEA_STROKES: Array<Omit<Stroke, 'points'> & { px: Array<[number, number]> }> = [
  // The right ear (about 50% alpha in revision 1): one wide stroke whose outer side follows the
  // ear's edge, tip to base; its inner side runs over the opaque forehead, where restoring changes nothing.
  {
    tool: 'restore',
    px: [
      [368, 0],
      [357, 30],
      [346, 56],
    ],
    size: 0.12,
    hardness: 0.8,
    opacity: 1,
  },
  // The ear's inner corner next to the forehead, which the first stroke's rim does not reach.
  {
    tool: 'restore',
    px: [
      [330, 2],
      [342, 22],
    ],
    size: 0.06,
    hardness: 0.8,
    opacity: 1,
  },
  // The chin and chest at the bottom right (50–80% alpha), kept inside x ≈ 385.
  {
    tool: 'restore',
    px: [
      [348, 300],
      [350, 266],
    ],
    size: 0.15,
    hardness: 0.75,
    opacity: 1,
  },
  // The background smear right of the cheek, kept clear of the face's edge (x ≈ 365).
  {
    tool: 'erase',
    px: [
      [392, 96],
      [418, 94],
    ],
    size: 0.09,
    hardness: 0.5,
    opacity: 1,
  },
]

const segmenter = await createSegmenter()
const app = createApp({ signingKey: KEY, model: { current: segmenter } })

interface Output {
  frame: OutputFrame
  bytes: Uint8Array
  timings: Record<string, number>
}

/** Posts a signed job request to the in-process app and returns its one output. */
async function call(path: string, parts: RequestPart[]): Promise<Output> {
  const { headers, body } = await signedRequest(KEY, 'POST', path, parts)
  const res = await app.request(path, { method: 'POST', headers, body })
  if (res.headers.get('content-type') !== FRAMES_CONTENT_TYPE || !res.body)
    throw new Error(`${path} answered ${res.status}: ${await res.text()}`)
  let output: Omit<Output, 'timings'> | undefined
  for await (const frame of readFrames(res.body)) {
    if (frame.type === 'output') {
      const { body: stream, ...header } = frame
      output = { frame: header, bytes: new Uint8Array(await new Response(stream).arrayBuffer()) }
    } else if (frame.type === 'error') throw new Error(`${path}: ${frame.code}: ${frame.message}`)
    else if (frame.type === 'done') {
      if (!output) throw new Error(`${path} ended without an output`)
      return { ...output, timings: frame.timings ?? {} }
    }
  }
  throw new Error(`${path}: the answer ended without done`)
}

const log = (what: string, o: Output) =>
  console.log(
    `${what.padEnd(44)} ${o.frame.contentType.padEnd(16)} ${`${o.frame.width}×${o.frame.height}`.padEnd(10)} ${String(o.bytes.byteLength).padStart(8)} B  ${Object.entries(
      o.timings,
    )
      .map(([k, v]) => `${k} ${v.toFixed(0)} ms`)
      .join(', ')}`,
  )

const revise = (base: Uint8Array, width: number, height: number, strokes: Stroke[]) =>
  call('/v1/revise', [optionsPart({ width, height, strokes }), imagePart(base, 'mask')])

const exportOf = (photo: Uint8Array, mask: Uint8Array, format: ExportFormat, recipe: Recipe) =>
  call('/v1/export', [optionsPart({ format, recipe }), imagePart(photo), imagePart(mask, 'mask')])

// ---- Presentation --------------------------------------------------------------------------

interface Raw {
  data: Buffer
  width: number
  height: number
}

/** An image scaled to `width` (up only when asked), as RGBA; a 1-channel mask comes back grey. */
async function scaled(bytes: Uint8Array, width: number, enlarge = false): Promise<Raw> {
  const { data, info } = await sharp(bytes)
    .resize({ width, withoutEnlargement: !enlarge, kernel: 'lanczos3' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

/** RGBA over an 8 px light checkerboard, opaque. */
function overChecker({ data, width, height }: Raw): Raw {
  const out = Buffer.alloc(width * height * 4)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      const bg = ((x >> 3) + (y >> 3)) & 1 ? 204 : 255
      const a = data[i + 3] / 255
      for (let c = 0; c < 3; c++) out[i + c] = Math.round(data[i + c] * a + bg * (1 - a))
      out[i + 3] = 255
    }
  return { data: out, width, height }
}

/** The photo with the strokes drawn at their true width: restore green, erase red, half opaque. */
async function withStrokes(photo: Uint8Array, strokes: Stroke[], srcW: number, srcH: number, width: number) {
  const base = await scaled(photo, width)
  const k = base.width / srcW
  const brush = Math.max(srcW, srcH) * k
  const paths = strokes
    .map((s) => {
      const pts = s.points.map(([x, y]) => `${(x * srcW * k).toFixed(1)},${(y * srcH * k).toFixed(1)}`).join(' ')
      const colour = s.tool === 'restore' ? '#19C24A' : '#E8332A'
      return `<polyline points="${pts}" fill="none" stroke="${colour}" stroke-opacity="0.55" stroke-width="${(s.size * brush).toFixed(1)}" stroke-linecap="round" stroke-linejoin="round"/>`
    })
    .join('')
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${base.width}" height="${base.height}">${paths}</svg>`
  const data = await sharp(base.data, { raw: { width: base.width, height: base.height, channels: 4 } })
    .composite([{ input: Buffer.from(svg) }])
    .raw()
    .toBuffer()
  return { data, width: base.width, height: base.height }
}

/** Panels side by side, tops aligned, each in a 1 px frame, on the page colour. */
async function row(panels: Raw[]): Promise<import('sharp').Sharp> {
  const framed = await Promise.all(
    panels.map((p) =>
      sharp(p.data, { raw: { width: p.width, height: p.height, channels: 4 } })
        .extend({ top: 1, bottom: 1, left: 1, right: 1, background: FRAME })
        .png()
        .toBuffer({ resolveWithObject: true }),
    ),
  )
  const width = framed.reduce((w, f) => w + f.info.width, 0) + GAP * (framed.length - 1)
  const height = Math.max(...framed.map((f) => f.info.height))
  let left = 0
  const layers = framed.map((f) => {
    const layer = { input: f.data, left, top: 0 }
    left += f.info.width + GAP
    return layer
  })
  return sharp({ create: { width, height, channels: 4, background: PAGE } }).composite(layers)
}

/** Panel width when `n` framed panels share MAX_WIDTH. */
const panelWidth = (n: number) => Math.floor((MAX_WIDTH - GAP * (n - 1)) / n) - 2

const written: Array<[string, number]> = []
async function save(name: string, image: import('sharp').Sharp) {
  const bytes = name.endsWith('.png')
    ? await image.png({ compressionLevel: 9, palette: false }).toBuffer()
    : await image.flatten({ background: PAGE }).jpeg({ quality: 85, mozjpeg: true }).toBuffer()
  writeFileSync(`${OUT}${name}`, bytes)
  written.push([name, bytes.byteLength])
}

// ---- The pictures --------------------------------------------------------------------------

mkdirSync(OUT, { recursive: true })
const TRANSPARENT: Recipe = { version: 1 }

async function project(file: string) {
  const photo = new Uint8Array(await readFile(`${FIXTURES}${file}`))
  const removal = await call('/v1/remove', [optionsPart(REMOVAL), imagePart(photo)])
  log(`${file} /v1/remove (cutout)`, removal)
  const { width = 0, height = 0 } = await sharp(photo).metadata()
  // POST /v1/projects: revision 1 is the removal's result run through /v1/revise with no strokes.
  const rev1 = await revise(removal.bytes, width, height, [])
  log(`${file} revision 1 (/v1/revise, no strokes)`, rev1)
  return { photo, width, height, rev1: rev1.bytes }
}

// chelsea.png: strokes, and a contain export.
{
  const { photo, width, height, rev1 } = await project('chelsea.png')
  const strokes: Stroke[] = CHELSEA_STROKES.map(({ px, ...s }) => ({
    ...s,
    points: px.map(([x, y]) => [+(x / width).toFixed(4), +(y / height).toFixed(4)] as [number, number]),
  }))
  console.log(JSON.stringify(strokes))
  const rev2 = await revise(rev1, width, height, strokes)
  log(`chelsea.png revision 2 (/v1/revise, ${strokes.length} strokes)`, rev2)

  const w2 = panelWidth(2)
  await save(
    'chelsea-original-strokes.jpg',
    await row([await scaled(photo, w2), await withStrokes(photo, strokes, width, height, w2)]),
  )
  await save('chelsea-masks.png', await row([await scaled(rev1, w2), await scaled(rev2.bytes, w2)]))

  const png1 = await exportOf(photo, rev1, 'png', TRANSPARENT)
  log('chelsea.png export png, revision 1', png1)
  const png2 = await exportOf(photo, rev2.bytes, 'png', TRANSPARENT)
  log('chelsea.png export png, revision 2', png2)
  // The cutouts' right strip (x ≥ 271, where every stroke is) at 1.75×, over a checkerboard.
  const strip = async (png: Uint8Array) =>
    overChecker(
      await scaled(await sharp(png).extract({ left: 271, top: 0, width: 180, height: 300 }).toBuffer(), w2, true),
    )
  await save('chelsea-detail.jpg', await row([await strip(png1.bytes), await strip(png2.bytes)]))

  const contain = await exportOf(photo, rev2.bytes, 'jpeg', {
    version: 1,
    background: { type: 'color', color: LIGHT_GREY },
    width: 800,
    height: 800,
  })
  log('chelsea.png export jpeg, contain 800×800', contain)
  await save('chelsea-contain-800.jpg', await row([await scaled(contain.bytes, 360)]))
}

// coffee.png: a product shot, its exports.
{
  const { photo, rev1 } = await project('coffee.png')
  const w2 = panelWidth(2)
  const png = await exportOf(photo, rev1, 'png', TRANSPARENT)
  log('coffee.png export png', png)
  await save(
    'coffee-original-cutout.jpg',
    await row([await scaled(photo, w2), overChecker(await scaled(png.bytes, w2))]),
  )

  const market = await exportOf(photo, rev1, 'jpeg', {
    version: 1,
    background: { type: 'color', color: '#FFFFFF' },
    crop: true,
    margin: 40,
  })
  log('coffee.png export jpeg, crop + margin 40, white', market)
  await save('coffee-marketplace.jpg', await row([await scaled(market.bytes, 400)]))

  const zip = await exportOf(photo, rev1, 'zip', TRANSPARENT)
  log('coffee.png export zip', zip)
  const entries = unzipSync(zip.bytes)
  console.log(`  zip entries: ${Object.keys(entries).join(', ')}`)
  const color = entries['color.jpg']
  const alpha = entries['alpha.png']
  if (!color || !alpha) throw new Error('the zip lacks color.jpg or alpha.png')
  await save('coffee-zip.jpg', await row([await scaled(color, w2), await scaled(alpha, w2)]))
}

await segmenter.close()
let total = 0
for (const [name, bytes] of written) {
  total += bytes
  console.log(`docs/editing/${name.padEnd(30)} ${String(bytes).padStart(8)} B`)
}
console.log(`total ${total} B`)
