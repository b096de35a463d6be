/**
 * Makes the pictures of docs/catalog.md (`tsx scripts/catalog-pictures.ts`): the CPU catalog
 * generator, run in-process with the real model on the fixture photos, and each result reduced to
 * at most 640 px and saved as JPEG (quality 85) in docs/catalog/, so the docs stay small. The
 * generator's own output is a PNG at the requested size; these are reduced copies of it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createCpuGenerator } from '../inference-server/src/catalog/cpu.js'
import { createSegmenter } from '../inference-server/src/segmentation/index.js'
import { type CatalogOptions, CatalogOptionsSchema } from '../src/contract/catalog.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const sharp = createRequire(join(root, 'inference-server/package.json'))('sharp') as typeof import('sharp').default
const out = join(root, 'docs/catalog')
const photo = (name: string) => new Uint8Array(readFileSync(join(root, 'inference-server/test/fixtures', name)))
const MAX_SIDE = 640

async function save(name: string, image: Uint8Array): Promise<void> {
  const jpeg = await sharp(image)
    .resize(MAX_SIDE, MAX_SIDE, { fit: 'inside', withoutEnlargement: true, kernel: 'lanczos3' })
    .jpeg({ quality: 85, mozjpeg: true })
    .toBuffer()
  writeFileSync(join(out, name), jpeg)
  process.stderr.write(`${name}: ${jpeg.length} bytes\n`)
}

/** Images side by side on white, each fitted into a `cell`-px-high slot. */
async function strip(images: Uint8Array[], cell: number): Promise<Buffer> {
  const fitted = await Promise.all(
    images.map((image) => sharp(image).resize({ height: cell }).png().toBuffer({ resolveWithObject: true })),
  )
  const gap = 8
  const width = fitted.reduce((sum, f) => sum + f.info.width, 0) + gap * (fitted.length - 1)
  let left = 0
  const layers = fitted.map((f) => {
    const layer = { input: f.data, left, top: 0 }
    left += f.info.width + gap
    return layer
  })
  return sharp({ create: { width, height: cell, channels: 3, background: '#ffffff' } })
    .composite(layers)
    .png()
    .toBuffer()
}

mkdirSync(out, { recursive: true })
const segmenter = await createSegmenter()
const generator = createCpuGenerator()
const lanczos = createCpuGenerator({ upscaler: null })
const make = async (images: Uint8Array[], options: Partial<CatalogOptions>, using = generator) => {
  const refs = images.map((bytes, i) => ({ name: `reference-${i}`, bytes }))
  const parsed = CatalogOptionsSchema.parse({ seed: 7, ...options })
  return (await using.generate(refs, parsed, { segmenter, onStage: () => {} })).png
}

try {
  const coffee = photo('coffee.png')
  await save('reference-coffee.jpg', coffee)
  for (const shadow of ['soft', 'hard', 'floating'] as const) {
    await save(`hero-${shadow}.jpg`, await make([coffee], { shadow }))
  }
  const views = [coffee, photo('rocket.jpg'), photo('chelsea.png')]
  await save('references-views.jpg', await strip(views, 200))
  await save('views.jpg', await make(views, { layout: 'views', width: 1536, height: 768 }))

  // Super-resolution against lanczos3 alone, 1:1 crops of the spoon: the fixture into 1024²
  // (2.1×: the model at x3, then shrunk) and a 200 px copy into 2048² (13×: x3, then lanczos3 4.3×).
  const small = await sharp(coffee).resize(200, 200, { fit: 'inside' }).png().toBuffer()
  const rows: Buffer[] = []
  for (const [reference, side, area] of [
    [coffee, 1024, { left: 580, top: 520, width: 300, height: 300 }],
    [small, 2048, { left: 1200, top: 1080, width: 300, height: 300 }],
  ] as const) {
    const crops = await Promise.all(
      [generator, lanczos].map(async (using) =>
        sharp(await make([reference], { width: side, height: side }, using))
          .extract(area)
          .png()
          .toBuffer(),
      ),
    )
    rows.push(await strip(crops, 300))
  }
  const [top, bottom] = await Promise.all(rows.map((row) => sharp(row).metadata()))
  const both = await sharp({
    create: {
      width: top.width ?? 0,
      height: (top.height ?? 0) + (bottom.height ?? 0) + 8,
      channels: 3,
      background: '#ffffff',
    },
  })
    .composite([
      { input: rows[0], left: 0, top: 0 },
      { input: rows[1], left: 0, top: (top.height ?? 0) + 8 },
    ])
    .png()
    .toBuffer()
  await save('super-resolution.jpg', both)
} finally {
  await generator.close()
  await segmenter.close()
}
