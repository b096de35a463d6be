/**
 * The catalog generator's parts without the model: the seed's numbers, the layout's boxes, the
 * shadow's extent, compositing (product pixels kept, background exact), the bounded colour
 * balance, the super-resolution choice and the backend configuration. catalog.test.ts runs the
 * whole thing with the real model.
 */
import { describe, expect, it } from 'vitest'
import { SUBJECT_FILL } from '../../src/contract/catalog.js'
import { applyBalance, measureBalance } from '../src/catalog/balance.js'
import { composeCanvas, parseHex } from '../src/catalog/compose.js'
import { catalogConfigFromEnv } from '../src/catalog/generator.js'
import { MAX_JITTER, planHero, planViews, VIEW_RATIO } from '../src/catalog/layout.js'
import { between, seededRandom } from '../src/catalog/random.js'
import { SR_MIN_FACTOR, superResolutionScale } from '../src/catalog/scale.js'
import { castShadow, drawLight, LIGHT_BOUNDS } from '../src/catalog/shadow.js'
import { modelScaleFor, type Upscaler } from '../src/catalog/upscale.js'

const SQUARE = { width: 1024, height: 1024 }
const STILL = { dx: 0, dy: 0 }

/** A filled ellipse of alpha 255 in a `width`×`height` plane. */
function ellipse(width: number, height: number): Uint8Array {
  const alpha = new Uint8Array(width * height)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const u = (x + 0.5) / width - 0.5
      const v = (y + 0.5) / height - 0.5
      if (u * u + v * v <= 0.25) alpha[y * width + x] = 255
    }
  return alpha
}

describe('seeded random numbers', () => {
  it('repeat for a seed and differ between seeds', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed))
    expect(draw(42)).toEqual(draw(42))
    expect(draw(42)).not.toEqual(draw(43))
    for (const v of draw(4_294_967_295)) expect(v).toBeGreaterThanOrEqual(0)
    const rand = seededRandom(1)
    for (let i = 0; i < 1000; i++) {
      const v = between(rand, -2, 3)
      expect(v).toBeGreaterThanOrEqual(-2)
      expect(v).toBeLessThan(3)
    }
  })

  it('keep the light within its bounds', () => {
    for (let seed = 0; seed < 200; seed++) {
      const light = drawLight(seededRandom(seed))
      expect(light.angle).toBeGreaterThanOrEqual(LIGHT_BOUNDS.angle[0])
      expect(light.angle).toBeLessThan(LIGHT_BOUNDS.angle[1])
      expect(light.softness).toBeGreaterThanOrEqual(LIGHT_BOUNDS.softness[0])
      expect(light.softness).toBeLessThan(LIGHT_BOUNDS.softness[1])
    }
  })
})

describe('layout', () => {
  it('hero: the box spans 85 % of the longer side, centred', () => {
    expect(planHero({ width: 300, height: 400 }, SQUARE, STILL, 0)).toEqual({ x: 186, y: 77, width: 653, height: 870 })
    const wide = planHero({ width: 500, height: 100 }, SQUARE, STILL, 0)
    expect(wide.width).toBe(Math.round(SUBJECT_FILL * 1024))
  })

  it('hero: fits the shorter side when 85 % of the longer would not', () => {
    const rect = planHero({ width: 200, height: 200 }, { width: 1024, height: 512 }, STILL, 0)
    expect(rect).toEqual({ x: 295, y: 39, width: 435, height: 435 })
  })

  it('hero: the offset moves the box, keeping it on the canvas', () => {
    const moved = planHero({ width: 300, height: 400 }, SQUARE, { dx: 10, dy: -10 }, 0)
    expect(moved).toEqual({ x: 196, y: 67, width: 653, height: 870 })
    const edge = planHero({ width: 300, height: 400 }, SQUARE, { dx: 0, dy: Math.round(MAX_JITTER * 1024) * 9 }, 0)
    expect(edge.y + edge.height).toBe(1024)
  })

  it('views: one row, front first and tallest, 85 % of the width, on one floor', () => {
    const subjects = [
      { width: 300, height: 400 },
      { width: 300, height: 400 },
      { width: 200, height: 400 },
      { width: 100, height: 100 },
    ]
    const rects = planViews(subjects, SQUARE, STILL, 0)
    expect(rects).toHaveLength(4)
    const row = rects[3].x + rects[3].width - rects[0].x
    expect(Math.abs(row - SUBJECT_FILL * 1024)).toBeLessThanOrEqual(4)
    for (let i = 1; i < 4; i++) {
      expect(rects[i].x).toBeGreaterThan(rects[i - 1].x + rects[i - 1].width)
      expect(rects[i].height).toBeLessThan(rects[0].height)
      expect(Math.abs(rects[i].height - VIEW_RATIO * rects[0].height)).toBeLessThanOrEqual(1)
      expect(rects[i].y + rects[i].height).toBe(rects[0].y + rects[0].height)
    }
  })
})

describe('shadow and compositing', () => {
  const rect = { x: 312, y: 112, width: 400, height: 800 }
  const alpha = ellipse(rect.width, rect.height)
  const light = { angle: 0.2, softness: 1, drop: 0.002 }

  it('none casts nothing; the others only near the base', () => {
    expect(castShadow(SQUARE, [{ rect, alpha }], 'none', light)).toBeNull()
    for (const style of ['soft', 'hard', 'floating'] as const) {
      const shade = castShadow(SQUARE, [{ rect, alpha }], style, light)
      if (!shade) throw new Error('expected a shadow')
      let top = 1024
      let darkest = 0
      for (let y = 0; y < 1024; y++)
        for (let x = 0; x < 1024; x++) {
          const s = shade[y * 1024 + x]
          if (s) top = Math.min(top, y)
          darkest = Math.max(darkest, s)
        }
      // A shadow on the floor: nothing in the subject's upper half, and never black.
      expect(top, style).toBeGreaterThan(rect.y + rect.height / 2)
      expect(darkest, style).toBeGreaterThan(20)
      expect(darkest, style).toBeLessThan(200)
    }
  })

  it('keeps the subject where alpha is 255 and the background exact where nothing reaches', () => {
    const background = parseHex('#F2E8DA')
    expect(background).toEqual([0xf2, 0xe8, 0xda])
    const rgb = new Uint8Array(rect.width * rect.height * 3).map((_, i) => (i * 7) % 256)
    const shade = castShadow(SQUARE, [{ rect, alpha }], 'soft', light)
    const canvas = composeCanvas(SQUARE, background, shade, [{ rect, rgb, alpha }])
    const same = (a: ArrayLike<number>, i: number, b: ArrayLike<number>, j: number) =>
      a[i] === b[j] && a[i + 1] === b[j + 1] && a[i + 2] === b[j + 2]
    let kept = 0
    let plain = 0
    let wrong = 0
    for (let y = 0; y < 1024; y++)
      for (let x = 0; x < 1024; x++) {
        const o = (y * 1024 + x) * 3
        const inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
        const k = (y - rect.y) * rect.width + (x - rect.x)
        if (inside && alpha[k] === 255) {
          if (same(canvas, o, rgb, k * 3)) kept++
          else wrong++
        } else if ((!inside || alpha[k] === 0) && !shade?.[y * 1024 + x]) {
          if (same(canvas, o, background, 0)) plain++
          else wrong++
        }
      }
    expect(wrong).toBe(0)
    expect(kept).toBeGreaterThan(200_000)
    expect(plain).toBeGreaterThan(500_000)
  })
})

describe('colour balance', () => {
  const solid = (r: number, g: number, b: number, n = 10_000) => {
    const rgb = new Uint8Array(n * 3)
    for (let i = 0; i < rgb.length; i += 3) rgb.set([r, g, b], i)
    return { rgb, alpha: new Uint8Array(n).fill(255) }
  }

  it('neutralises a cast on grey, by at most 8 %', () => {
    const { rgb, alpha } = solid(200, 185, 165)
    const balance = measureBalance(rgb, alpha)
    for (const g of balance.whiteBalance) expect(Math.abs(g - 1)).toBeLessThanOrEqual(0.08 + 1e-9)
    expect(balance.whiteBalance[0]).toBeCloseTo(0.92)
    const out = applyBalance(rgb, balance)
    expect(out[0] - out[2]).toBeLessThan(10)
  })

  it('leaves a saturated product alone and never darkens', () => {
    const { rgb, alpha } = solid(220, 30, 40)
    const balance = measureBalance(rgb, alpha)
    expect(balance.whiteBalance).toEqual([1, 1, 1])
    expect(balance.exposure).toBeGreaterThanOrEqual(1)
    const bright = solid(250, 250, 250)
    expect(measureBalance(bright.rgb, bright.alpha).gains).toEqual([1, 1, 1])
  })

  it('lifts a dim subject by at most 15 %', () => {
    const { rgb, alpha } = solid(100, 100, 100)
    const balance = measureBalance(rgb, alpha)
    expect(balance.exposure).toBeCloseTo(1.15)
    expect(applyBalance(rgb, balance)[0]).toBe(115)
  })
})

describe('super-resolution choice', () => {
  const upscaler = { version: 'test' } as Upscaler

  it('runs past 1.5× at the smallest model scale that reaches the size (x2, x3)', () => {
    expect(modelScaleFor(1.6)).toBe(2)
    expect(modelScaleFor(2)).toBe(2)
    expect(modelScaleFor(2.1)).toBe(3)
    expect(modelScaleFor(9)).toBe(3)
    const small = { width: 200, height: 150 }
    expect(superResolutionScale(small, { width: 290, height: 217 }, upscaler)).toBeNull()
    expect(SR_MIN_FACTOR).toBe(1.5)
    expect(superResolutionScale(small, { width: 1740, height: 1305 }, upscaler)).toBe(3)
    expect(superResolutionScale(small, { width: 1740, height: 1305 }, null)).toBeNull()
    // Past the output budget: lanczos3.
    expect(superResolutionScale({ width: 1500, height: 1500 }, { width: 3400, height: 3400 }, upscaler)).toBeNull()
  })
})

describe('backend configuration', () => {
  it('defaults to the CPU generator with ESRGAN', () => {
    expect(catalogConfigFromEnv({})).toEqual({ backend: 'cpu', superResolution: true })
    expect(catalogConfigFromEnv({ CATALOG_SUPER_RESOLUTION: 'off' })).toEqual({
      backend: 'cpu',
      superResolution: false,
    })
  })

  it('reads the remote backend and refuses bad values', () => {
    expect(catalogConfigFromEnv({ CATALOG_BACKEND: 'remote', CATALOG_REMOTE_URL: 'http://gpu:8000/generate' })).toEqual(
      { backend: 'remote', url: 'http://gpu:8000/generate', timeoutMs: 120_000, model: 'remote' },
    )
    expect(() => catalogConfigFromEnv({ CATALOG_BACKEND: 'remote' })).toThrow(/CATALOG_REMOTE_URL/)
    expect(() => catalogConfigFromEnv({ CATALOG_BACKEND: 'gpu' })).toThrow(/CATALOG_BACKEND/)
    expect(() =>
      catalogConfigFromEnv({
        CATALOG_BACKEND: 'remote',
        CATALOG_REMOTE_URL: 'http://x',
        CATALOG_REMOTE_TIMEOUT_MS: '5',
      }),
    ).toThrow(/CATALOG_REMOTE_TIMEOUT_MS/)
  })
})
