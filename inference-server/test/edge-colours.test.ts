/**
 * Clean edge colours at every level (issue 22): a cutout's edge pixels carry their old background
 * (a mix αF + (1 − α)B); every level takes it out, while the mask stays the level's own; `fast`
 * estimates them at its model input's pixels (issue 44). Stub segmenters, no model.
 */
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { composeCutout } from '../src/imaging/compose.js'
import { decodeImage } from '../src/imaging/decode.js'
import { decontaminate } from '../src/imaging/refine.js'
import { levelMask } from '../src/levels/index.js'
import type { Quality } from '../src/options.js'
import { levelAlpha, removeBackground } from '../src/remove.js'
import type { Segmenter } from '../src/segmentation/index.js'
import { rawPng, STUB_INPUT } from './helpers.js'

const W = 2048
const H = 32
/** α ramps from 0 to 1 over 8 columns around 1000 (a soft edge 2048 px wide): red foreground over green. */
const alphaAt = (x: number) => Math.min(1, Math.max(0, (x - 996) / 8))

async function spilledPhoto(): Promise<Buffer> {
  const data = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const a = alphaAt(x)
      data.set([Math.round(255 * a), Math.round(255 * (1 - a)), 0], (y * W + x) * 3)
    }
  return sharp(data, { raw: { width: W, height: H, channels: 3 } })
    .png()
    .toBuffer()
}

/** A model that knows the true alpha. */
const truthModel: Segmenter = {
  version: 'stub@1',
  input: STUB_INPUT,
  async segment(image) {
    const data = new Uint8Array(image.width * image.height)
    for (let i = 0; i < data.length; i++) data[i] = Math.round(255 * alphaAt(i % image.width))
    return { data, width: image.width, height: image.height }
  },
  close: async () => {},
}

/** Mean green (the old background) left in the cutout's edge pixels, weighted by α. */
function greenSpill(rgba: Uint8Array): number {
  let spill = 0
  let weight = 0
  for (let i = 0; i < W * H; i++) {
    const a = rgba[i * 4 + 3] / 255
    if (a === 0 || a === 1) continue
    spill += a * rgba[i * 4 + 1]
    weight += a
  }
  return spill / weight
}

describe('cutout edge colours', () => {
  it.each<Quality>(['fast', 'balanced', 'high'])('%s takes the old background out of the edge', async (quality) => {
    const photo = await spilledPhoto()
    const before = greenSpill(
      new Uint8Array(
        await sharp(photo)
          .joinChannel(Buffer.from(Array.from({ length: W * H }, (_, i) => Math.round(255 * alphaAt(i % W)))), {
            raw: { width: W, height: H, channels: 1 },
          })
          .raw()
          .toBuffer(),
      ),
    )
    const cutout = await removeBackground(truthModel, photo, {
      quality,
      alpha: { mode: 'raw', feather: 0 },
      output: 'cutout',
    })
    const { data } = await rawPng(cutout.png)
    // The edge keeps well under half the green it had; fast's and balanced's alpha is the model's,
    // untouched (high re-solves its edge band by matting).
    expect(greenSpill(data)).toBeLessThan(before * 0.5)
    if (quality !== 'high')
      for (let x = 0; x < W; x++) expect(data[(16 * W + x) * 4 + 3]).toBe(Math.round(255 * alphaAt(x)))
  })
})

describe("fast's edge colours at its input's pixels (issue 44)", () => {
  // 1200 × 800: more than fast's 704 × 640 input, less than the default 4 MP working size.
  const BW = 1200
  const BH = 800
  /** α over a wavy edge, soft over ~12 px: a red-to-yellow subject on a striped green background. */
  const edgeAt = (x: number, y: number) => Math.min(1, Math.max(0, (x - 600 - 40 * Math.sin(y / 60)) / 12 + 0.5))
  async function bigPhoto(): Promise<Buffer> {
    const data = new Uint8Array(BW * BH * 3)
    for (let y = 0; y < BH; y++)
      for (let x = 0; x < BW; x++) {
        const a = edgeAt(x, y)
        const fg = [230, Math.round((200 * y) / BH), 20]
        const bg = [20, (x >> 3) % 2 ? 180 : 90, 60]
        data.set(
          [0, 1, 2].map((c) => Math.round(a * fg[c] + (1 - a) * bg[c])),
          (y * BW + x) * 3,
        )
      }
    return sharp(data, { raw: { width: BW, height: BH, channels: 3 } })
      .png()
      .toBuffer()
  }
  /** A size-agnostic model that knows the true alpha at any input. */
  const anySize: Segmenter = {
    version: 'stub@1',
    input: { kind: 'any', native: { width: 1024, height: 1024 }, multiple: 64 },
    async segment(image) {
      const data = new Uint8Array(image.width * image.height)
      for (let i = 0; i < data.length; i++)
        data[i] = Math.round(255 * edgeAt(i % image.width, Math.floor(i / image.width)))
      return { data, width: image.width, height: image.height }
    },
    close: async () => {},
  }
  const cutoutOf = async (quality: Quality, bytes: Buffer) =>
    (
      await rawPng(
        (
          await removeBackground(anySize, bytes, { quality, alpha: { mode: 'raw', feather: 0 }, output: 'cutout' })
        ).png,
      )
    ).data
  const expected = async (quality: Quality, bytes: Buffer, maxWorkPixels?: number) => {
    const { image } = await decodeImage(bytes)
    const { mask } = await levelAlpha(anySize, image, quality)
    const colour = await decontaminate(image, mask, maxWorkPixels ? { maxWorkPixels } : {})
    return Buffer.from(composeCutout(colour, mask).data)
  }

  it("fast's mask reports where it was decided: its input's pixels, and the photo scaled there", async () => {
    const { image } = await decodeImage(await bigPhoto())
    const { working } = await levelMask(anySize, image, 'fast')
    expect(working?.pixels).toBe(704 * 640)
    expect([working?.photo?.width, working?.photo?.height]).toEqual([822, 548]) // 1200 × 800 scaled to ≤ 450,560 px
    expect((await levelMask(anySize, image, 'balanced')).working).toBeUndefined()
  })

  it('fast estimates them at 704 × 640 pixels (not the photo’s), balanced as before', async () => {
    const bytes = await bigPhoto()
    const fast = await cutoutOf('fast', bytes)
    // Bit for bit what decontaminate gives scaling the photo itself: the finish's scaled photo is the same.
    expect(fast.equals(await expected('fast', bytes, 704 * 640))).toBe(true)
    // The working size is what changed: at the default one the colours differ.
    expect(fast.equals(await expected('fast', bytes))).toBe(false)
    expect((await cutoutOf('balanced', bytes)).equals(await expected('balanced', bytes))).toBe(true)
  })
})
