/**
 * Clean edge colours at every level (issue 22): a cutout's edge pixels carry their old background
 * (a mix αF + (1 − α)B); every level takes it out, while the mask stays the level's own. Stub
 * segmenter, no model.
 */
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import type { Quality } from '../src/options.js'
import { removeBackground } from '../src/remove.js'
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
