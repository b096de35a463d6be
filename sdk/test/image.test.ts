/**
 * The SDK refuses an image the API would refuse by its size and header, with the API's own
 * sniffing and words (sdk/src/image-sniff.ts, generated from src/lib/image-sniff.ts), reading only
 * the first bytes; a file it passes is read whole, as it was.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readImageFile } from '@cutout/sdk/node'
import sharp from 'sharp'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { generateImageSniff, IMAGE_SNIFF_PATH } from '../../scripts/lib/sdk-schema'
import { checkDimensions, SNIFF_BYTES } from '../../src/lib/image-sniff'
import { checkImage } from '../src/image'
import { CutoutProblem } from '../src/problem'

const dir = mkdtempSync(join(tmpdir(), 'cutout-image-'))
/** The photo of issue 43: 6336×3960 is 25.09 MP. One colour: a small file, and nothing decodes it. */
let hugeJpeg: Buffer

beforeAll(async () => {
  hugeJpeg = await sharp({ create: { width: 6336, height: 3960, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('sdk/src/image-sniff.ts is the API’s src/lib/image-sniff.ts (else run `npm run sdk:generate`)', () => {
  const committed = readFileSync(IMAGE_SNIFF_PATH, 'utf8')
  expect(committed === generateImageSniff(), 'sdk/src/image-sniff.ts is stale: run `npm run sdk:generate`').toBe(true)
})

it('checkImage answers the API’s problem for an image over 25 MP, reading only its first bytes', async () => {
  const read: [number | undefined, number | undefined][] = []
  /** A Blob that records which of its bytes were read. */
  class Watched extends Blob {
    override slice(start?: number, end?: number) {
      read.push([start, end])
      return super.slice(start, end)
    }
  }
  const refusal = await checkImage(new Watched([hugeJpeg]), 'image').catch((err: unknown) => err)
  expect(refusal).toBeInstanceOf(CutoutProblem)
  expect(refusal).toMatchObject({
    status: 413,
    code: 'image_too_large',
    title: 'Image too large',
    field: 'image',
    detail: checkDimensions(6336, 3960)?.message,
  })
  expect(read).toEqual([[0, SNIFF_BYTES]])
})

it('readImageFile refuses before reading the file whole, and reads a file it passes byte for byte', async () => {
  const huge = join(dir, 'huge.jpg')
  writeFileSync(huge, hugeJpeg)
  await expect(readImageFile(huge, { field: 'path' })).rejects.toMatchObject({
    code: 'image_too_large',
    field: 'path',
    detail: 'Expected at most 25 megapixels but the image is 6336×3960',
  })
  const text = join(dir, 'notes.png')
  writeFileSync(text, 'not an image')
  await expect(readImageFile(text)).rejects.toMatchObject({ status: 415, code: 'unsupported_media' })

  const photo = join(dir, 'photo.webp')
  const bytes = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#336699' } })
    .webp()
    .toBuffer()
  writeFileSync(photo, bytes)
  const file = await readImageFile(photo)
  expect(file).toMatchObject({ name: 'photo.webp', type: 'image/webp', size: bytes.length })
  expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true)
})
