/**
 * The refinement's steps on small synthetic planes, without the model: the region, the taper,
 * islands, settling between looks, each point's own pixel, the colour cut and the mask part.
 */
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { label, touchingSides } from '../src/refinement/components.js'
import { colourCut } from '../src/refinement/grabcut.js'
import { decodeMaskPng } from '../src/refinement/mask.js'
import { applyIslands, honourPoints, settleDisagreements } from '../src/refinement/points.js'
import { boxRect, refinementRegion, taperWeights, toPixel } from '../src/refinement/region.js'

const NO_SIDES = { left: false, top: false, right: false, bottom: false }

/** A w×h plane of `fill` with rectangles [x0, y0, x1, y1] set to `value`. */
function plane(w: number, h: number, fill: number, rects: [number, number, number, number, number][] = []) {
  const out = new Uint8Array(w * h).fill(fill)
  for (const [x0, y0, x1, y1, value] of rects) {
    for (let y = y0; y < y1; y++) out.fill(value, y * w + x0, y * w + x1)
  }
  return out
}

describe('region', () => {
  it('maps points and boxes to pixels, x = 1 to the last column', () => {
    expect(toPixel({ x: 1, y: 0, label: 'foreground' }, 100, 50)).toEqual({ x: 99, y: 0, foreground: true })
    expect(boxRect({ x: 0.25, y: 0.5, width: 0.5, height: 0.5 }, 100, 50)).toEqual({ x0: 25, y0: 25, x1: 75, y1: 50 })
    // The schema lets x + width reach 1 + 1e-9: still inside.
    expect(boxRect({ x: 0.3, y: 0, width: 0.7 + 1e-9, height: 1 }, 1000, 10).x1).toBe(1000)
  })

  it('takes the points with a margin of a tenth of the longer side, clamped, and grows a box to reach its points', () => {
    const point = { x: 0.5, y: 0.5, label: 'background' } as const
    expect(refinementRegion({ points: [point] }, 1000, 500)).toEqual({ x0: 400, y0: 150, x1: 601, y1: 351 })
    expect(refinementRegion({ points: [{ ...point, x: 0 }] }, 1000, 500).x0).toBe(0)
    // Small images: at least 32 px.
    expect(refinementRegion({ points: [point] }, 100, 100)).toEqual({ x0: 18, y0: 18, x1: 83, y1: 83 })
    const box = { x: 0, y: 0, width: 0.2, height: 0.2 }
    expect(refinementRegion({ box, points: [{ ...point, x: 0.1, y: 0.1 }] }, 1000, 1000)).toEqual({
      x0: 0,
      y0: 0,
      x1: 200,
      y1: 200,
    })
    expect(refinementRegion({ box, points: [point] }, 1000, 1000)).toEqual({ x0: 0, y0: 0, x1: 601, y1: 601 })
  })

  it('tapers only towards the sides that meet the untouched mask', () => {
    const w = taperWeights({ x0: 0, y0: 10, x1: 20, y1: 30 }, 20, 40, 4)
    // Left and right are the image's edges: full weight there; top and bottom fall towards 0.
    expect(w[10 * 20 + 0]).toBe(1)
    expect(w[10 * 20 + 19]).toBe(1)
    expect(w[0]).toBeLessThan(0.1)
    expect(w[19 * 20 + 10]).toBeLessThan(0.1)
    expect(w[2 * 20 + 10]).toBeGreaterThan(w[0])
  })
})

describe('connected regions', () => {
  it('labels 4-connected regions and says which touch the given sides', () => {
    const p = plane(6, 4, 0, [
      [0, 0, 2, 2, 1],
      [3, 1, 5, 3, 1],
    ])
    const parts = label(p, 6, 4)
    expect(parts.count).toBe(2)
    expect([...touchingSides(parts, 6, 4, { ...NO_SIDES, left: true })]).toEqual([0, 1, 0])
  })
})

describe('points', () => {
  it('drops a foreground island under a background point, with its halo', () => {
    const p = plane(40, 40, 0, [
      [10, 10, 20, 20, 255],
      [9, 9, 21, 10, 60],
    ])
    applyIslands(p, 40, 40, [{ x: 15, y: 15, foreground: false }], NO_SIDES, { reach: 32, fringe: 3 })
    expect(p.every((v) => v === 0)).toBe(true)
  })

  it('leaves a region that runs out of the point’s reach, or that a foreground point vouches for', () => {
    const wide = plane(100, 20, 0, [[0, 5, 100, 15, 255]])
    const before = new Uint8Array(wide)
    applyIslands(
      wide,
      100,
      20,
      [{ x: 50, y: 10, foreground: false }],
      { ...NO_SIDES, left: true },
      { reach: 20, fringe: 2 },
    )
    expect(wide).toEqual(before)
    const vouched = plane(40, 40, 0, [[10, 10, 20, 20, 255]])
    const points = [
      { x: 12, y: 12, foreground: false },
      { x: 18, y: 18, foreground: true },
    ]
    applyIslands(vouched, 40, 40, points, NO_SIDES, { reach: 32, fringe: 2 })
    expect(vouched[15 * 40 + 15]).toBe(255)
  })

  it('fills a hole under a foreground point', () => {
    const p = plane(40, 40, 255, [[15, 15, 20, 20, 0]])
    applyIslands(p, 40, 40, [{ x: 17, y: 17, foreground: true }], NO_SIDES, { reach: 32, fringe: 2 })
    expect(p.every((v) => v === 255)).toBe(true)
  })

  it('takes the base back where a point says the zoomed look was wrong', () => {
    const base = plane(30, 30, 0, [[0, 0, 15, 30, 255]])
    const looked = plane(30, 30, 0, [[20, 0, 30, 30, 255]])
    settleDisagreements(looked, base, 30, 30, [{ x: 5, y: 5, foreground: true }], 2)
    // The left half comes back; the right half (no point on it) keeps the look.
    expect(looked[5 * 30 + 5]).toBe(255)
    expect(looked[5 * 30 + 25]).toBe(255)
  })

  it('ends every point on its side', () => {
    const p = plane(10, 10, 200)
    honourPoints(
      p,
      10,
      10,
      [
        { x: 2, y: 2, foreground: false },
        { x: 7, y: 7, foreground: true },
      ],
      1,
    )
    expect(p[2 * 10 + 2]).toBeLessThanOrEqual(127)
    expect(p[2 * 10 + 3]).toBeLessThanOrEqual(127)
    expect(p[7 * 10 + 7]).toBe(200)
  })
})

describe('colour cut (GrabCut, opencv.js)', () => {
  /** A red square on blue; the mask has only the square's left half. */
  const scene = () => {
    const w = 120
    const rgb = new Uint8Array(w * w * 3)
    for (let i = 0; i < w * w; i++) {
      const x = i % w
      const y = Math.floor(i / w)
      const inSquare = x >= 30 && x < 90 && y >= 30 && y < 90
      rgb.set(inSquare ? [200, 30, 20] : [20, 40, 180], i * 3)
    }
    return {
      image: { data: rgb, width: w, height: w, channels: 3 as const },
      mask: plane(w, w, 0, [[30, 30, 60, 90, 255]]),
    }
  }

  it('fills what a foreground point vouches for, by colour, the same way every time', async () => {
    const { image, mask } = scene()
    const first = new Uint8Array(mask)
    await colourCut(image, first, [{ x: 75, y: 60, foreground: true }], NO_SIDES)
    expect(first[60 * 120 + 80]).toBeGreaterThanOrEqual(128)
    expect(first[60 * 120 + 100]).toBeLessThan(128)
    const second = new Uint8Array(mask)
    await colourCut(image, second, [{ x: 75, y: 60, foreground: true }], NO_SIDES)
    expect(second).toEqual(first)
  })

  it('changes nothing no point vouches for', async () => {
    const { image, mask } = scene()
    const out = new Uint8Array(mask)
    // The background point sits where the mask already says background.
    await colourCut(image, out, [{ x: 5, y: 5, foreground: false }], NO_SIDES)
    expect(out).toEqual(mask)
  })
})

describe('the mask part', () => {
  const grey = plane(40, 30, 0, [[0, 0, 20, 30, 200]])
  const png8 = () =>
    sharp(grey, { raw: { width: 40, height: 30, channels: 1 } })
      .toColourspace('b-w')
      .png()
      .toBuffer()

  it('reads 8-bit and 16-bit greyscale, and the alpha of RGBA', async () => {
    expect((await decodeMaskPng(await png8(), 40, 30)).data).toEqual(grey)
    const png16 = await sharp(grey, { raw: { width: 40, height: 30, channels: 1 } })
      .toColourspace('grey16')
      .png()
      .toBuffer()
    expect((await decodeMaskPng(png16, 40, 30)).data).toEqual(grey)
    const rgba = await sharp(plane(40, 30 * 3, 9), { raw: { width: 40, height: 30, channels: 3 } })
      .joinChannel(Buffer.from(grey), { raw: { width: 40, height: 30, channels: 1 } })
      .png()
      .toBuffer()
    expect((await decodeMaskPng(rgba, 40, 30)).data).toEqual(grey)
  })

  it('refuses another size and other formats with invalid_input', async () => {
    await expect(decodeMaskPng(await png8(), 41, 30)).rejects.toMatchObject({ code: 'invalid_input' })
    const jpeg = await sharp(grey, { raw: { width: 40, height: 30, channels: 1 } })
      .jpeg()
      .toBuffer()
    await expect(decodeMaskPng(jpeg, 40, 30)).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'Expected the mask part to be a PNG',
    })
  })
})
