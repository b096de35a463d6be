/**
 * `high`'s choice among views of the photo (src/levels/views.ts), with stub models: the most
 * decisive view is kept, mirrored back; balanced's own view wins ties; `balanced` never changes.
 */
import { describe, expect, it } from 'vitest'
import type { RgbImage } from '../src/imaging/types.js'
import { levelMask } from '../src/levels/index.js'
import { confidence } from '../src/levels/views.js'
import type { InputSize, Segmenter } from '../src/segmentation/index.js'
import { STUB_INPUT } from './helpers.js'

const W = 64
const H = 48
/** A photo whose left column is marked red (255), so a stub can tell the mirrored view. */
function photo(): RgbImage {
  const data = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) data[y * W * 3] = 255
  return { data, width: W, height: H, channels: 3 }
}
const mirrored = (image: RgbImage) => image.data[0] !== 255

/**
 * Unsure (mid-grey with a faint left half) on the photo as given, decisive (its left quarter
 * foreground) on the mirrored one: in the photo's own frame, the right quarter.
 */
function stub(decisiveWhenMirrored: boolean, sizes: InputSize[] = []): Segmenter {
  return {
    version: 'stub@1',
    input: STUB_INPUT,
    async segment(image, size) {
      if (size) sizes.push(size)
      const data = new Uint8Array(image.width * image.height)
      for (let i = 0; i < data.length; i++) {
        const x = i % image.width
        data[i] =
          decisiveWhenMirrored && mirrored(image) ? (x < image.width / 4 ? 255 : 0) : x < image.width / 2 ? 150 : 110
      }
      return { data, width: image.width, height: image.height }
    },
    close: async () => {},
  }
}

describe("high's views", () => {
  it('keeps the most decisive view, mirrored back into the photo frame', async () => {
    const { mask, modelRuns } = await levelMask(stub(true), photo(), 'high')
    expect(modelRuns).toBe(2)
    for (let x = 0; x < W; x++) expect(mask.data[10 * W + x]).toBe(x >= (3 * W) / 4 ? 255 : 0)
  })

  it("keeps balanced's view when no other is more decisive, and balanced itself runs once", async () => {
    const high = await levelMask(stub(false), photo(), 'high')
    const balanced = await levelMask(stub(true), photo(), 'balanced')
    expect(balanced.modelRuns).toBe(1)
    expect(high.mask.data).toEqual(balanced.mask.data)
  })

  it('adds the photo-aspect view on a model that takes any size', async () => {
    const sizes: InputSize[] = []
    const model = {
      ...stub(false, sizes),
      input: { kind: 'any' as const, native: { width: 1024, height: 1024 }, multiple: 64 },
    }
    const { modelRuns } = await levelMask(model, photo(), 'high')
    expect(modelRuns).toBe(3)
    expect(sizes).toContainEqual({ width: 1152, height: 896 })
  })

  it('scores decisiveness from 0 (all mid-grey) to 1 (all 0 or 255)', () => {
    expect(confidence(new Uint8Array([0, 255, 255]))).toBe(1)
    expect(confidence(new Uint8Array([127.5, 128]))).toBeLessThan(0.01)
  })
})
