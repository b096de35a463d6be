import { describe, expect, it } from 'vitest'
import { boxMean, decontaminate, refineMask } from '../src/imaging/refine.js'

describe('boxMean', () => {
  it('averages a clipped window', () => {
    const src = Float32Array.from([0, 0, 3, 0, 0])
    expect(Array.from(boxMean(src, 5, 1, 1))).toEqual([0, 1, 1, 1, 0])
    const flat = new Float32Array(12).fill(0.25)
    expect(Array.from(boxMean(flat, 4, 3, 2)).every((v) => Math.abs(v - 0.25) < 1e-6)).toBe(true)
  })
})

describe('refineMask', () => {
  // A photo with a sharp vertical edge at x = 1000 and a mask as soft as an upscaled model mask
  // (an 8 px ramp: about 4 model pixels at 2048 px wide).
  const width = 2048
  const height = 64
  const edge = 1000
  const image = { data: new Uint8Array(width * height * 3), width, height, channels: 3 as const }
  const mask = { data: new Uint8Array(width * height), width, height }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      image.data.fill(x >= edge ? 220 : 30, (y * width + x) * 3, (y * width + x) * 3 + 3)
      mask.data[y * width + x] = Math.round(Math.min(1, Math.max(0, (x - edge + 4) / 8)) * 255)
    }
  }
  /** Mean distance of one row from the ideal hard edge at the image edge. */
  const edgeError = (data: Uint8Array) => {
    let sum = 0
    for (let x = 0; x < width; x++) sum += Math.abs(data[32 * width + x] - (x >= edge ? 255 : 0))
    return sum / width
  }

  it('pulls a soft mask edge onto the image edge and leaves flat areas alone', async () => {
    const refined = await refineMask(image, mask)
    expect(refined.data.length).toBe(width * height)
    expect(edgeError(refined.data)).toBeLessThan(edgeError(mask.data) * 0.8)
    const row = refined.data.subarray(32 * width, 33 * width)
    // The steepest step is now at the image edge, not spread evenly over the ramp.
    expect(row[edge] - row[edge - 1]).toBeGreaterThan(100)
    expect(row[edge - 8]).toBe(0)
    expect(row[edge + 8]).toBe(255)
    expect(row[10]).toBe(0)
    expect(row[width - 10]).toBe(255)
  })

  it('gives the same result through the subsampled (fast guided filter) path', async () => {
    const refined = await refineMask(image, mask, { maxWorkPixels: (width * height) / 4 })
    expect(edgeError(refined.data)).toBeLessThan(edgeError(mask.data) * 0.8)
    const row = refined.data.subarray(32 * width, 33 * width)
    expect(row[10]).toBe(0)
    expect(row[width - 10]).toBe(255)
  })
})

/** A 2048×32 image split at x = 1000 into two colours, and a soft 8 px mask ramp around the split. */
function twoColours(left: [number, number, number], right: [number, number, number]) {
  const width = 2048
  const height = 32
  const edge = 1000
  const image = { data: new Uint8Array(width * height * 3), width, height, channels: 3 as const }
  const mask = { data: new Uint8Array(width * height), width, height }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      image.data.set(x >= edge ? right : left, (y * width + x) * 3)
      mask.data[y * width + x] = Math.round(Math.min(1, Math.max(0, (x - edge + 4) / 8)) * 255)
    }
  }
  return { image, mask, width, edge }
}

describe('refineMask with a colour guide', () => {
  it('finds an edge between two colours of nearly the same luminance, which a grey guide gets wrong', async () => {
    // Rec. 601 luma: 0.299·200 + 0.587·60 + 0.114·60 ≈ 102 and 0.299·20 + 0.587·120 + 0.114·180 ≈ 97.
    const { image, mask, width, edge } = twoColours([200, 60, 60], [20, 120, 180])
    const error = (data: Uint8Array) => {
      let sum = 0
      for (let x = 0; x < width; x++) sum += Math.abs(data[16 * width + x] - (x >= edge ? 255 : 0))
      return sum
    }
    const colour = await refineMask(image, mask)
    const grey = await refineMask(image, mask, { guide: 'grey' })
    expect(error(colour.data)).toBeLessThan(error(mask.data) * 0.75)
    // The grey guide sees a 5-level step and puts the edge on the wrong side of it.
    expect(error(grey.data)).toBeGreaterThan(error(mask.data))
  })
})

describe('decontaminate', () => {
  it('takes the old background out of edge colours and leaves certain pixels alone', async () => {
    // The photo is a true mix αF + (1 − α)B of red over blue along the ramp.
    const { image, mask, width } = twoColours([0, 0, 255], [255, 0, 0])
    for (let i = 0; i < mask.data.length; i++) {
      const a = mask.data[i] / 255
      image.data.set([Math.round(255 * a), 0, Math.round(255 * (1 - a))], i * 3)
    }
    const clean = await decontaminate(image, mask)
    const row = 16 * width
    let before = 0
    let after = 0
    let n = 0
    for (let x = 0; x < width; x++) {
      const a = mask.data[row + x]
      const k = (row + x) * 3
      if (a === 0 || a === 255) {
        // Certain pixels keep their colour exactly.
        expect(Array.from(clean.data.subarray(k, k + 3))).toEqual(Array.from(image.data.subarray(k, k + 3)))
        continue
      }
      // Distance from pure red (the foreground) in the edge band.
      before += Math.abs(image.data[k] - 255) + image.data[k + 2]
      after += Math.abs(clean.data[k] - 255) + clean.data[k + 2]
      n++
    }
    expect(n).toBeGreaterThan(0)
    // One narrow round (the default) removes well over half of it; two rounds (wide first) nearly all.
    expect(after / n).toBeLessThan((before / n) * 0.5)
    const twoRounds = await decontaminate(image, mask, { rounds: 2 })
    let after2 = 0
    for (let x = 0; x < width; x++) {
      const a = mask.data[row + x]
      const k = (row + x) * 3
      if (a !== 0 && a !== 255) after2 += Math.abs(twoRounds.data[k] - 255) + twoRounds.data[k + 2]
    }
    expect(after2 / n).toBeLessThan((before / n) * 0.2)
  })
})
