import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { decodeImage, inspectHeader } from '../src/imaging/decode.js'
import { sniffImageType } from '../src/imaging/sniff.js'
import { fixture } from './helpers.js'

const FORMATS = [
  ['jpg', 'image/jpeg'],
  ['png', 'image/png'],
  ['webp', 'image/webp'],
  ['avif', 'image/avif'],
  ['heic', 'image/heic'],
  ['heif', 'image/heif'],
] as const

describe('decodeImage', () => {
  it.each(FORMATS)('decodes small.%s (%s) to 512×512 RGB close to the PNG', async (ext, mimeType) => {
    const reference = await decodeImage(await fixture('small.png'))
    const decoded = await decodeImage(await fixture(`small.${ext}`))
    expect(decoded).toMatchObject({ mimeType, width: 512, height: 512 })
    expect(decoded.image.channels).toBe(3)
    expect(decoded.image.data.length).toBe(512 * 512 * 3)
    // Lossy encodings differ a little; a wrong decode (channel order, stride) differs a lot.
    let sum = 0
    for (let i = 0; i < decoded.image.data.length; i++) sum += Math.abs(decoded.image.data[i] - reference.image.data[i])
    expect(sum / decoded.image.data.length).toBeLessThan(8)
  })

  it('applies EXIF orientation', async () => {
    const jpeg = await sharp({ create: { width: 60, height: 40, channels: 3, background: '#f00' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer()
    expect(await inspectHeader(jpeg)).toMatchObject({ width: 40, height: 60 })
    expect(await decodeImage(jpeg)).toMatchObject({ width: 40, height: 60 })
  })

  it('decodes greyscale and 16-bit RGBA PNGs to 8-bit RGB', async () => {
    const grey = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#777' } })
      .toColourspace('b-w')
      .png()
      .toBuffer()
    const deep = await sharp({
      create: { width: 40, height: 40, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 0.5 } },
    })
      .png()
      .toColourspace('rgb16')
      .toBuffer()
    for (const bytes of [grey, deep]) {
      const { image } = await decodeImage(bytes)
      expect(image.channels).toBe(3)
      expect(image.data.length).toBe(40 * 40 * 3)
    }
  })

  it('refuses over 25 MP from the header with 413', async () => {
    const big = await sharp({ create: { width: 6000, height: 5000, channels: 3, background: '#888' } })
      .jpeg()
      .toBuffer()
    await expect(decodeImage(big)).rejects.toMatchObject({
      code: 'image_too_large',
      status: 413,
      message: 'Expected at most 25000000 pixels but received 6000×5000 (30000000)',
    })
  })

  it('refuses an image under 32×32 with 400', async () => {
    const tiny = await sharp({ create: { width: 31, height: 64, channels: 3, background: '#888' } })
      .png()
      .toBuffer()
    await expect(decodeImage(tiny)).rejects.toMatchObject({
      code: 'invalid_input',
      status: 400,
      message: 'Expected an image of at least 32×32 pixels but received 31×64',
    })
  })

  it.each(['jpg', 'png', 'webp', 'heic'])('refuses a truncated %s with 400', async (ext) => {
    const bytes = await fixture(`small.${ext}`)
    await expect(decodeImage(bytes.subarray(0, Math.floor(bytes.length / 2)))).rejects.toMatchObject({
      code: 'invalid_input',
      status: 400,
    })
  })

  it('refuses text and other formats with 415', async () => {
    const text = new TextEncoder().encode('hello, this is not an image at all')
    await expect(decodeImage(text)).rejects.toMatchObject({ code: 'unsupported_media', status: 415 })
    const gif = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#888' } })
      .gif()
      .toBuffer()
    await expect(decodeImage(gif)).rejects.toMatchObject({ code: 'unsupported_media', status: 415 })
  })
})

describe('sniffImageType', () => {
  it.each(FORMATS)('recognises small.%s as %s', async (ext, mimeType) => {
    expect(sniffImageType(await fixture(`small.${ext}`))).toBe(mimeType)
  })
  it('recognises nothing in empty or short input', () => {
    expect(sniffImageType(new Uint8Array())).toBeUndefined()
    expect(sniffImageType(new Uint8Array([0xff, 0xd8]))).toBeUndefined()
  })
})

describe('decodeImage with a pixel budget', () => {
  it('scales a 12 MP photo down to at most the budget, keeping its aspect', async () => {
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer()
    const { width, height, image } = await decodeImage(new Uint8Array(big), { maxPixels: 250_000 })
    expect(width * height).toBeLessThanOrEqual(250_000)
    expect(width * height).toBeGreaterThan(240_000)
    expect(Math.abs(width / height - 4 / 3)).toBeLessThan(0.01)
    expect(image.data.length).toBe(width * height * 3)
  })
})
