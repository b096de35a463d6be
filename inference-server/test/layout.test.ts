/**
 * The export size arithmetic shared with the edge (src/contract/editing.ts): the edge refuses a
 * recipe at request time by `smallestCanvas`, the renderer lays it out with `planLayout`; with
 * `crop` the edge does not know the subject's box, so its answer must be a lower bound of every
 * render, and exact without `crop`. No images, no model.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_RENDER_PIXELS, type Recipe, smallestCanvas } from '../../src/contract/editing.js'
import { InferenceError } from '../src/errors.js'
import { planLayout } from '../src/render/layout.js'

const photo = fc.record({ width: fc.integer({ min: 32, max: 5000 }), height: fc.integer({ min: 32, max: 5000 }) })
const recipe = fc.record(
  {
    version: fc.constant(1 as const),
    crop: fc.boolean(),
    margin: fc.double({ min: 0, max: 5000, noNaN: true }),
    width: fc.integer({ min: 1, max: 10_000 }),
    height: fc.integer({ min: 1, max: 10_000 }),
  },
  { requiredKeys: ['version'] },
)
/** A box inside the photo, as fractions of its sides. */
const fractions = fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }))

/** The size planLayout renders, or the one its 413 names. */
function rendered(size: { width: number; height: number }, box: ReturnType<typeof boxIn>, r: Recipe) {
  try {
    const { width, height } = planLayout(size, box, r)
    return { width, height, refused: false }
  } catch (err) {
    if (!(err instanceof InferenceError) || err.code !== 'image_too_large') throw err
    const [, width, height] = /makes (\d+)×(\d+)$/.exec(err.message)?.map(Number) ?? []
    return { width, height, refused: true }
  }
}

function boxIn(size: { width: number; height: number }, [fw, fh]: [number, number]) {
  const width = Math.max(1, Math.round(fw * size.width))
  const height = Math.max(1, Math.round(fh * size.height))
  return { x: size.width - width, y: size.height - height, width, height }
}

describe('the export size the edge checks and the size the renderer makes', () => {
  it('agree exactly without crop, and with crop the edge never says more than any subject makes', () => {
    fc.assert(
      fc.property(photo, recipe, fractions, (size, r, f) => {
        const smallest = smallestCanvas(size, r)
        const made = rendered(size, boxIn(size, f), r)
        if (!r.crop) expect([made.width, made.height]).toEqual([smallest.width, smallest.height])
        else expect(made.width * made.height).toBeGreaterThanOrEqual(smallest.width * smallest.height)
        // What the edge refuses, the renderer would refuse too.
        if (smallest.width * smallest.height > MAX_RENDER_PIXELS) expect(made.refused).toBe(true)
      }),
      { numRuns: 2000 },
    )
  })

  it('knows at request time the recipes that can only fail', () => {
    const size = { width: 512, height: 512 }
    const over = (r: Recipe) => {
      const { width, height } = smallestCanvas(size, r)
      return width * height > MAX_RENDER_PIXELS
    }
    expect(over({ version: 1, width: 10_000, height: 10_000 })).toBe(true)
    expect(over({ version: 1, crop: true, margin: 5000 })).toBe(true)
    expect(over({ version: 1, margin: 5000 })).toBe(true)
    expect(over({ version: 1, width: 5000, height: 5000 })).toBe(false)
    // Crop to a subject of unknown shape, 10000 wide: a flat subject makes a small canvas.
    expect(over({ version: 1, crop: true, width: 10_000 })).toBe(false)
  })
})
