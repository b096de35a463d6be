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
  const colour = Math.sqrt(dr * dr + dg * dg + db * db) / (255 * Math.sqrt(3))
  return length * w.spatial + w.colour * colour + (w.mask * Math.abs(mask[i] - mask[j])) / 255
}

/** Forward: from the left and above; backward: from the right and below. */
const FORWARD: Array<[number, number]> = [
  [-1, 0],
  [-1, -1],
  [0, -1],
  [1, -1],
]
const BACKWARD: Array<[number, number]> = FORWARD.map(([dx, dy]) => [-dx, -dy])

function scan(field: GeodesicField, w: GeodesicWeights, dist: Float32Array, forward: boolean): void {
  const { width, height } = field
  const steps = forward ? FORWARD : BACKWARD
  for (let k = 0; k < width * height; k++) {
    const i = forward ? k : width * height - 1 - k
    const x = i % width
    const y = (i - x) / width
    let best = dist[i]
    for (const [dx, dy] of steps) {
      const nx = x + dx
      const ny = y + dy
      if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue
      const j = ny * width + nx
      if (dist[j] >= best) continue
      const d = dist[j] + stepCost(field, w, i, j, dx !== 0 && dy !== 0 ? Math.SQRT2 : 1)
      if (d < best) best = d
    }
    dist[i] = best
  }
}

/**
 * The geodesic distance of every pixel from the nearest seed (`Infinity` without seeds). Seeds are
 * pixel indices into the field.
 */
export function geodesicDistance(field: GeodesicField, weights: GeodesicWeights, seeds: number[]): Float32Array {
  const dist = new Float32Array(field.width * field.height).fill(Number.POSITIVE_INFINITY)
  if (!seeds.length) return dist
  for (const s of seeds) dist[s] = 0
  for (let pass = 0; pass < PASSES; pass++) {
    scan(field, weights, dist, true)
    scan(field, weights, dist, false)
  }
  return dist
}
