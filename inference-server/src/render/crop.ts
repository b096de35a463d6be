/**
 * The subject's box for a recipe's `crop` (DESIGN.md §3 Exports): the tight box of the pixels
 * with alpha ≥ 8, ignoring connected specks (8-connected) smaller than 0.1 % of the subject's
 * area, that is of all those pixels together. Components are found over runs of a row rather
 * than pixels (union-find on runs), so a 25 MP mask costs memory in proportion to its edges.
 */
import type { Mask } from '../imaging/types.js'

/** Alpha from which a pixel counts as subject. */
export const CROP_ALPHA = 8
/** Components below this fraction of the subject's area are specks. */
export const SPECK_FRACTION = 0.001

/** A rectangle of pixels: `x`, `y` its top left, `width`×`height` its size. */
export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

/** Runs of subject pixels, row by row: `[x0, x1)` on row `y`, and a union-find parent each. */
class Runs {
  count = 0
  y = new Int32Array(1024)
  x0 = new Int32Array(1024)
  x1 = new Int32Array(1024)
  parent = new Int32Array(1024)

  add(y: number, x0: number, x1: number): number {
    if (this.count === this.y.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2)
        b.set(a)
        return b
      }
      this.y = grow(this.y)
      this.x0 = grow(this.x0)
      this.x1 = grow(this.x1)
      this.parent = grow(this.parent)
    }
    const k = this.count++
    this.y[k] = y
    this.x0[k] = x0
    this.x1[k] = x1
    this.parent[k] = k
    return k
  }

  find(k: number): number {
    let root = k
    while (this.parent[root] !== root) root = this.parent[root]
    // Path compression: later finds on this chain are one step.
    while (this.parent[k] !== root) {
      const next = this.parent[k]
      this.parent[k] = root
      k = next
    }
    return root
  }

  union(a: number, b: number): void {
    const ra = this.find(a)
    const rb = this.find(b)
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb)
  }
}

/** Every run of the mask, joined with the runs of the row above that touch it (diagonals too). */
function findRuns(mask: Mask): Runs {
  const { data, width, height } = mask
  const runs = new Runs()
  let above = 0
  let aboveEnd = 0
  for (let y = 0; y < height; y++) {
    const rowStart = runs.count
    const row = y * width
    let x = 0
    while (x < width) {
      if (data[row + x] < CROP_ALPHA) {
        x++
        continue
      }
      const x0 = x
      while (x < width && data[row + x] >= CROP_ALPHA) x++
      const k = runs.add(y, x0, x)
      // Runs above are sorted: skip those that end left of this one, join those that touch it.
      while (above < aboveEnd && runs.x1[above] < x0) above++
      for (let a = above; a < aboveEnd && runs.x0[a] <= x; a++) runs.union(k, a)
    }
    above = rowStart
    aboveEnd = runs.count
  }
  return runs
}

/**
 * The subject's tight box, or null when nothing is left once specks are ignored.
 * @example subjectBox(mask) // { x: 100, y: 150, width: 200, height: 200 }
 */
export function subjectBox(mask: Mask): Rect | null {
  const runs = findRuns(mask)
  const n = runs.count
  const area = new Float64Array(n)
  let total = 0
  for (let k = 0; k < n; k++) {
    const len = runs.x1[k] - runs.x0[k]
    area[runs.find(k)] += len
    total += len
  }
  const minArea = total * SPECK_FRACTION
  let x0 = Number.POSITIVE_INFINITY
  let y0 = Number.POSITIVE_INFINITY
  let x1 = Number.NEGATIVE_INFINITY
  let y1 = Number.NEGATIVE_INFINITY
  for (let k = 0; k < n; k++) {
    if (area[runs.find(k)] < minArea) continue
    x0 = Math.min(x0, runs.x0[k])
    x1 = Math.max(x1, runs.x1[k])
    y0 = Math.min(y0, runs.y[k])
    y1 = Math.max(y1, runs.y[k] + 1)
  }
  return x1 > x0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null
}
