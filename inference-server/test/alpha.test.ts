import { describe, expect, it } from 'vitest'
import { applyAlpha, featherMask, featherSigma, thresholdMask } from '../src/imaging/alpha.js'
import { stepMask } from './helpers.js'

const ramp = () => ({ data: Uint8Array.from({ length: 256 }, (_, i) => i), width: 16, height: 16 })

describe('thresholdMask', () => {
  it('makes alpha ≥ threshold opaque and the rest transparent', () => {
    const out = thresholdMask(ramp(), 0.5)
    expect(out.data[127]).toBe(0)
    expect(out.data[128]).toBe(255) // 128/255 ≥ 0.5
    expect(new Set(out.data)).toEqual(new Set([0, 255]))
  })
  it('keeps everything at 0 and only full opacity at 1', () => {
    expect(thresholdMask(ramp(), 0).data.every((v) => v === 255)).toBe(true)
    const one = thresholdMask(ramp(), 1).data
    expect(one[255]).toBe(255)
    expect(one.slice(0, 255).every((v) => v === 0)).toBe(true)
  })
  it('does not modify its input', () => {
    const mask = ramp()
    thresholdMask(mask, 0.5)
    expect(mask.data[100]).toBe(100)
  })
})

describe('featherMask', () => {
  it('leaves the mask untouched at 0', async () => {
    const mask = stepMask(32, 8)
    expect(await featherMask(mask, 0)).toBe(mask)
  })

  it.each([1, 2, 4])('softens a hard edge over about ±%i source pixels and no further', async (radius) => {
    const width = 64
    const out = await featherMask(stepMask(width, 8), radius)
    expect(out.data.length).toBe(width * 8) // still one channel
    const row = Array.from(out.data.subarray(3 * width, 4 * width))
    const edge = width / 2 // first opaque column
    // Inside the radius the edge is soft...
    expect(row[edge - 1]).toBeGreaterThan(0)
    expect(row[edge - 1]).toBeLessThan(255)
    expect(row[edge]).toBeGreaterThan(0)
    expect(row[edge]).toBeLessThan(255)
    // ...beyond it (3 sigma) the mask is as it was, to within a rounding step.
    for (let x = 0; x < edge - radius - 1; x++) expect(row[x]).toBeLessThanOrEqual(1)
    for (let x = edge + radius + 1; x < width; x++) expect(row[x]).toBeGreaterThanOrEqual(254)
    // and it is monotonic
    for (let x = 1; x < width; x++) expect(row[x]).toBeGreaterThanOrEqual(row[x - 1])
  })

  it('uses sigma = radius / 3, never below sharp’s 0.3', () => {
    expect(featherSigma(3)).toBe(1)
    expect(featherSigma(0.5)).toBe(0.3)
  })
})

describe('applyAlpha', () => {
  it('raw keeps the soft values', async () => {
    const out = await applyAlpha(ramp(), { mode: 'raw', feather: 0 })
    expect(Array.from(out.data)).toEqual(Array.from(ramp().data))
  })
  it('binary makes a hard mask, then feathers it', async () => {
    const hard = await applyAlpha(ramp(), { mode: 'binary', threshold: 0.25, feather: 0 })
    expect(new Set(hard.data)).toEqual(new Set([0, 255]))
    const soft = await applyAlpha(
      { data: stepMask(32, 8).data.map((v) => (v ? 200 : 40)), width: 32, height: 8 },
      { mode: 'binary', threshold: 0.5, feather: 2 },
    )
    const values = new Set(soft.data)
    expect(values.has(0) && values.has(255)).toBe(true)
    expect(values.size).toBeGreaterThan(2)
  })
})

describe('alpha operations pinned on small synthetic masks', () => {
  it.each([0.1, 0.3, 0.5, 0.9])('threshold %f: opaque exactly where value / 255 ≥ threshold', (t) => {
    const out = thresholdMask(ramp(), t).data
    for (let v = 0; v < 256; v++) expect(out[v]).toBe(v / 255 >= t ? 255 : 0)
  })

  it('binary vs raw on the same soft edge: raw keeps every level, binary keeps two', async () => {
    // A 4 px ramp 0 → 255 across a 16-wide mask.
    const data = new Uint8Array(16 * 4)
    for (let y = 0; y < 4; y++)
      for (let x = 0; x < 16; x++) data[y * 16 + x] = Math.round(Math.min(1, Math.max(0, (x - 6) / 4)) * 255)
    const soft = { data, width: 16, height: 4 }
    const raw = await applyAlpha(soft, { mode: 'raw', feather: 0 })
    expect(Array.from(raw.data.subarray(0, 16))).toEqual([
      0, 0, 0, 0, 0, 0, 0, 64, 128, 191, 255, 255, 255, 255, 255, 255,
    ])
    const binary = await applyAlpha(soft, { mode: 'binary', threshold: 0.5, feather: 0 })
    expect(Array.from(binary.data.subarray(0, 16))).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255,
    ])
  })

  it('feather is measured in source pixels, at any image size: the edge spans ±radius pixels of the mask it is given', async () => {
    for (const width of [64, 4096]) {
      const out = await featherMask(stepMask(width, 4), 2)
      const row = out.data.subarray(width, 2 * width)
      const soft = Array.from(row).filter((v) => v > 0 && v < 255).length
      // ±2 px around the step: 4 columns, the same at 64 and at 4096 wide.
      expect(soft).toBe(4)
      // Symmetric about the edge (a Gaussian of a step), so the 50 % point stays where it was.
      expect(row[width / 2 - 1] + row[width / 2]).toBeGreaterThanOrEqual(254)
      expect(row[width / 2 - 1] + row[width / 2]).toBeLessThanOrEqual(256)
    }
  })
})
