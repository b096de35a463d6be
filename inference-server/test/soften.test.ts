import { describe, expect, it } from 'vitest'
import { softenChangedEdges } from '../src/refinement/soften.js'

/**
 * A photo with a vertical colour edge at x = 100, and a mask whose right part a point step
 * rewrote: a hard, staircased edge (as the colour cut writes at its reduced working size) a few
 * pixels off the photo's edge, in rows 0–59 only. Rows 60–99 and a soft model edge elsewhere
 * were not touched by the points.
 */
const width = 200
const height = 100
const edge = 100
const image = { data: new Uint8Array(width * height * 3), width, height, channels: 3 as const }
for (let i = 0; i < width * height; i++) image.data.fill(i % width >= edge ? 200 : 40, i * 3, i * 3 + 3)

/** The untouched mask: a soft ramp at x = 40 (the model's own edge), background right of it. */
function untouchedMask(): Uint8Array {
  const m = new Uint8Array(width * height)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) m[y * width + x] = Math.round(Math.min(1, Math.max(0, (44 - x) / 8)) * 255)
  return m
}

/** The mask after the points: rows 0–59 get foreground from a stepped edge at 103/97 to the right end. */
function maskAfterPoints(): Uint8Array {
  const m = untouchedMask()
  for (let y = 0; y < 60; y++) {
    const start = Math.floor(y / 4) % 2 ? 97 : 103
    for (let x = start; x < width; x++) m[y * width + x] = 255
  }
  return m
}

describe('softenChangedEdges', () => {
  it("lays a hard changed edge on the photo's edge, soft for a pixel or two, and touches nothing the points did not change", async () => {
    const plane = maskAfterPoints()
    const untouched = untouchedMask()
    await softenChangedEdges(image, untouched, plane, 2)

    // Far from the change (the model's ramp at x = 40, rows 60–99) every value is as it was.
    for (let y = 0; y < height; y++)
      for (let x = 0; x < 60; x++) expect(plane[y * width + x]).toBe(untouched[y * width + x])
    for (let y = 70; y < height; y++)
      for (let x = 0; x < width; x++) expect(plane[y * width + x]).toBe(untouched[y * width + x])

    // In the rewritten rows, the edge now sits on the photo's edge whatever the staircase said:
    // background left of it, foreground right of it, in the rows that stepped left and right alike.
    for (const y of [10, 30, 50]) {
      const row = plane.subarray(y * width, (y + 1) * width)
      expect(row[edge - 4]).toBeLessThan(64)
      expect(row[edge + 4]).toBeGreaterThan(191)
      expect(row[edge + 20]).toBe(255)
      // The crossing of ½ is within a pixel of the photo's edge.
      const crossing = row.findIndex((v, x) => x > 60 && v >= 128)
      expect(Math.abs(crossing - edge)).toBeLessThanOrEqual(1)
    }
  })

  it('leaves a plane the points did not change as it is', async () => {
    const plane = untouchedMask()
    await softenChangedEdges(image, untouchedMask(), plane, 2)
    expect(plane).toEqual(untouchedMask())
  })
})
