/**
 * Thin-plate-spline warps: `fitTps` finds the smoothest map (least bending energy) through the
 * pairs of points given, `warpLayer` uses one to pull a garment onto a region of the photo. The
 * map is fitted from the photo to the garment (backward), so every output pixel reads one place
 * of the garment and there are no holes. Plain JS and double precision: the same bytes anywhere.
 */
import type { Mask, RgbImage } from '../imaging/types.js'

export interface Point {
  x: number
  y: number
}

/** A map from the plane to the plane. */
export type Map2 = (x: number, y: number) => Point

/** The kernel U(r) = r² log r², 0 at r = 0. */
const kernel = (d2: number) => (d2 === 0 ? 0 : d2 * Math.log(d2))

/** Solves A x = b (Gaussian elimination with partial pivoting); A is n×n, row-major. */
function solve(a: Float64Array, b: Float64Array, n: number): Float64Array {
  for (let col = 0; col < n; col++) {
    let pivot = col
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r * n + col]) > Math.abs(a[pivot * n + col])) pivot = r
    if (Math.abs(a[pivot * n + col]) < 1e-12) throw new Error('thin-plate spline: the points are degenerate')
    if (pivot !== col) {
      for (let k = 0; k < n; k++) [a[col * n + k], a[pivot * n + k]] = [a[pivot * n + k], a[col * n + k]]
      ;[b[col], b[pivot]] = [b[pivot], b[col]]
    }
    for (let r = col + 1; r < n; r++) {
      const f = a[r * n + col] / a[col * n + col]
      if (f === 0) continue
      for (let k = col; k < n; k++) a[r * n + k] -= f * a[col * n + k]
      b[r] -= f * b[col]
    }
  }
  const x = new Float64Array(n)
  for (let r = n - 1; r >= 0; r--) {
    let sum = b[r]
    for (let k = r + 1; k < n; k++) sum -= a[r * n + k] * x[k]
    x[r] = sum / a[r * n + r]
  }
  return x
}

/**
 * The thin-plate spline through `from[i] → to[i]`. `smoothing` (in squared pixels of the
 * kernel's scale) lets it pass near rather than through points that disagree.
 * @example const back = fitTps(bodyPoints, garmentPoints); const { x, y } = back(120, 300)
 */
export function fitTps(from: Point[], to: Point[], smoothing = 0): Map2 {
  const n = from.length
  if (n < 3 || to.length !== n) throw new Error(`thin-plate spline: expected ≥ 3 pairs, got ${n} and ${to.length}`)
  // Scale coordinates to about 1 so the kernel's values stay well conditioned.
  const cx = from.reduce((s, p) => s + p.x, 0) / n
  const cy = from.reduce((s, p) => s + p.y, 0) / n
  const scale = Math.max(1, ...from.map((p) => Math.hypot(p.x - cx, p.y - cy)))
  const px = from.map((p) => (p.x - cx) / scale)
  const py = from.map((p) => (p.y - cy) / scale)
  const size = n + 3
  const a = new Float64Array(size * size)
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) a[i * size + j] = kernel((px[i] - px[j]) ** 2 + (py[i] - py[j]) ** 2)
    a[i * size + i] += smoothing
    const row = [1, px[i], py[i]]
    for (let k = 0; k < 3; k++) {
      a[i * size + n + k] = row[k]
      a[(n + k) * size + i] = row[k]
    }
  }
  const wx = solve(a.slice(), Float64Array.from([...to.map((p) => p.x), 0, 0, 0]), size)
  const wy = solve(a.slice(), Float64Array.from([...to.map((p) => p.y), 0, 0, 0]), size)
  return (x, y) => {
    const u = (x - cx) / scale
    const v = (y - cy) / scale
    let ox = wx[n] + wx[n + 1] * u + wx[n + 2] * v
    let oy = wy[n] + wy[n + 1] * u + wy[n + 2] * v
    for (let i = 0; i < n; i++) {
      const k = kernel((u - px[i]) ** 2 + (v - py[i]) ** 2)
      ox += wx[i] * k
      oy += wy[i] * k
    }
    return { x: ox, y: oy }
  }
}

/** A layer over a rectangle of the photo: colours and coverage, row-major over the rectangle. */
export interface WarpedLayer {
  rect: { x: number; y: number; width: number; height: number }
  rgb: Float32Array
  alpha: Float32Array
}

/** The map's grid step: it is evaluated every GRID px and interpolated between (smooth anyway). */
const GRID = 4

/**
 * Pulls `garment` (and its `mask`) into `rect` of the photo through `back` (photo → garment).
 * Colour is premultiplied by coverage while sampling, so the cut-out's background never bleeds in.
 */
export function warpLayer(garment: RgbImage, mask: Mask, back: Map2, rect: WarpedLayer['rect']): WarpedLayer {
  const { width, height } = rect
  const gw = Math.ceil(width / GRID) + 2
  const gh = Math.ceil(height / GRID) + 2
  const mapX = new Float64Array(gw * gh)
  const mapY = new Float64Array(gw * gh)
  for (let j = 0; j < gh; j++) {
    for (let i = 0; i < gw; i++) {
      const p = back(rect.x + i * GRID, rect.y + j * GRID)
      mapX[j * gw + i] = p.x
      mapY[j * gw + i] = p.y
    }
  }
  const rgb = new Float32Array(width * height * 3)
  const alpha = new Float32Array(width * height)
  const sample = [0, 0, 0, 0]
  for (let y = 0; y < height; y++) {
    const gj = Math.floor(y / GRID)
    const fy = y / GRID - gj
    for (let x = 0; x < width; x++) {
      const gi = Math.floor(x / GRID)
      const fx = x / GRID - gi
      const k = gj * gw + gi
      const sx = lerp2(mapX, k, gw, fx, fy)
      const sy = lerp2(mapY, k, gw, fx, fy)
      samplePremultiplied(garment, mask, sx, sy, sample)
      const o = y * width + x
      alpha[o] = sample[3]
      if (sample[3] > 0) for (let c = 0; c < 3; c++) rgb[o * 3 + c] = sample[c] / sample[3]
    }
  }
  return { rect, rgb, alpha }
}

const lerp2 = (m: Float64Array, k: number, w: number, fx: number, fy: number) =>
  (m[k] * (1 - fx) + m[k + 1] * fx) * (1 - fy) + (m[k + w] * (1 - fx) + m[k + w + 1] * fx) * fy

/** Bilinear sample of colour × coverage and coverage (0..1) at (x, y); outside is empty. */
function samplePremultiplied(image: RgbImage, mask: Mask, x: number, y: number, out: number[]): void {
  out.fill(0)
  const x0 = Math.floor(x)
  const y0 = Math.floor(y)
  const fx = x - x0
  const fy = y - y0
  for (let dy = 0; dy < 2; dy++) {
    const yy = y0 + dy
    if (yy < 0 || yy >= image.height) continue
    for (let dx = 0; dx < 2; dx++) {
      const xx = x0 + dx
      if (xx < 0 || xx >= image.width) continue
      const w = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy)
      const a = (mask.data[yy * image.width + xx] / 255) * w
      if (a === 0) continue
      const i = (yy * image.width + xx) * 3
      out[0] += image.data[i] * a
      out[1] += image.data[i + 1] * a
      out[2] += image.data[i + 2] * a
      out[3] += a
    }
  }
}
