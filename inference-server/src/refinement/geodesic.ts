/**
 * @module
 * Geodesic distance on an image (GeoS, Criminisi et al., ECCV 2008): the cost of the cheapest
 * path from a set of seed pixels, where a step costs its length grown by how much the photo (and
 * the model's mask) changes along it. Within one surface distances stay short; crossing an edge
 * costs as much as a long walk. Computed by raster scans (forward and backward chamfer passes with
 * the 8 neighbours, repeated), GeoS's approximation of the exact distance: a few passes in linear
 * time instead of a priority queue over every pixel.
 */

/** What a step is weighed by: the photo's colour and the model's mask, at one working size. */
export interface GeodesicField {
  width: number
  height: number
  /** Interleaved RGB, 0–255. */
  rgb: Uint8Array
  /** The model's (or the base revision's) mask, 0–255. */
  mask: Uint8Array
}

export interface GeodesicWeights {
  /** What a pixel of walk over an unchanging surface costs (clicks.ts gives it per pixel of its working size). */
  spatial: number
  /** What a full colour change (black to white) costs. */
  colour: number
  /** What a full change of the mask (0 to 255) costs. */
  mask: number
  /** A step's colour change up to this (0..1) costs nothing: texture within a surface is not an edge. */
  floor?: number
}

/** Scan pairs (forward + backward) to run; GeoS uses two. */
const PASSES = 2

/**
 * The cost of stepping between pixels `i` and `j`, `length` apart: the walk, plus what changes
 * along it. The change dominates on purpose (a small `spatial`): a click's pull crosses a whole
 * surface of one colour and stops at the edges around it.
 */
function stepCost(field: GeodesicField, w: GeodesicWeights, i: number, j: number, length: number): number {
  const { rgb, mask } = field
  const dr = rgb[i * 3] - rgb[j * 3]
  const dg = rgb[i * 3 + 1] - rgb[j * 3 + 1]
  const db = rgb[i * 3 + 2] - rgb[j * 3 + 2]
  // Colour change in 0..1 (Euclidean over the three channels, as GeoS's gradient magnitude).
  const colour = Math.max(0, Math.sqrt(dr * dr + dg * dg + db * db) / (255 * Math.sqrt(3)) - (w.floor ?? 0))
  return length * w.spatial + w.colour * colour + (w.mask * Math.abs(mask[i] - mask[j])) / 255
}

/**
 * The four steps a scan looks back along (left, up-left, up, up-right; the backward scan the
 * mirror): as (dx, dy), and for each pixel the cost of that step, computed once per field so that
 * each click's distance is additions only (a click's field in a few milliseconds at 512).
 */
const STEPS = [
  [-1, 0],
  [-1, -1],
  [0, -1],
  [1, -1],
] as const

/** A field's step costs, ready for any number of distances from different seeds. */
export interface GeodesicCosts {
  width: number
  height: number
  /** `step[k][i]`: the cost from pixel i to its neighbour STEPS[k] (Infinity off the image). */
  step: Float32Array[]
}

/** The step costs of `field` under `weights`. */
export function geodesicCosts(field: GeodesicField, weights: GeodesicWeights): GeodesicCosts {
  const { width, height } = field
  const step = STEPS.map(([dx, dy]) => {
    const cost = new Float32Array(width * height).fill(Number.POSITIVE_INFINITY)
    const length = dx !== 0 && dy !== 0 ? Math.SQRT2 : 1
    for (let y = 0; y < height; y++) {
      const ny = y + dy
      if (ny < 0) continue
      for (let x = 0; x < width; x++) {
        const nx = x + dx
        if (nx < 0 || nx >= width) continue
        const i = y * width + x
        cost[i] = stepCost(field, weights, i, ny * width + nx, length)
      }
    }
    return cost
  })
  return { width, height, step }
}

/**
 * One forward scan (each pixel from its neighbours left and above) and one backward (from the
 * right and below, along the same steps reversed: the cost of j → i is that of i → j).
 */
function scans(costs: GeodesicCosts, dist: Float32Array): void {
  const { width, step } = costs
  const n = dist.length
  const offsets = STEPS.map(([dx, dy]) => dy * width + dx)
  for (let i = 0; i < n; i++) {
    let best = dist[i]
    for (let k = 0; k < 4; k++) {
      const c = step[k][i]
      if (c === Number.POSITIVE_INFINITY) continue
      const d = dist[i + offsets[k]] + c
      if (d < best) best = d
    }
    dist[i] = best
  }
  for (let j = n - 1; j >= 0; j--) {
    let best = dist[j]
    for (let k = 0; k < 4; k++) {
      // j's neighbour along the reversed step k is i = j - offset; the step i → j costs step[k][i].
      const i = j - offsets[k]
      if (i < 0 || i >= n) continue
      const c = step[k][i]
      if (c === Number.POSITIVE_INFINITY) continue
      const d = dist[i] + c
      if (d < best) best = d
    }
    dist[j] = best
  }
}

/**
 * The geodesic distance of every pixel from the nearest seed (`Infinity` without seeds). Seeds are
 * pixel indices into the field; pass a field or its costs (several distances over one field).
 */
export function geodesicDistance(
  field: GeodesicField | GeodesicCosts,
  weights: GeodesicWeights | null,
  seeds: number[],
): Float32Array {
  const costs = 'step' in field ? field : geodesicCosts(field, weights ?? { spatial: 1, colour: 0, mask: 0 })
  const dist = new Float32Array(costs.width * costs.height).fill(Number.POSITIVE_INFINITY)
  if (!seeds.length) return dist
  for (const s of seeds) dist[s] = 0
  for (let pass = 0; pass < PASSES; pass++) scans(costs, dist)
  return dist
}
