/**
 * The click simulator of the interactive-segmentation benchmarks (RITM, Sofiiuk et al. 2022,
 * `isegm/inference/clicker.py`; also used by SimpleClick and SAM's evaluations), for
 * bench/clicks.ts. Pure and deterministic:
 * - the false-negative region is truth & !prediction, the false-positive region !truth & prediction,
 *   both without the ignored pixels (GrabCut's unlabelled 128 band);
 * - each region is padded with a 1-pixel border of zeros, so the image border counts as the
 *   region's border, and its exact Euclidean distance transform is taken (the distance of each
 *   region pixel to the nearest pixel outside the region; OpenCV's DIST_L2 with the precise mask in RITM);
 * - the pixels already clicked get distance 0 (RITM's `not_clicked_map`: a click that did not
 *   take is not repeated on the same pixel);
 * - the click is positive (foreground) when the false negatives' largest distance is larger than
 *   the false positives' (a tie is a negative click, as `fn_max_dist > fp_max_dist` in RITM), at
 *   the first pixel in row-major order where that region's distance is largest.
 */
import type { RefinementPoint } from '../../src/contract/editing.js'

/** One simulated click: its pixel and whether it marks foreground. */
export interface Click {
  row: number
  col: number
  positive: boolean
}

/**
 * The squared Euclidean distance transform of samples `f` (0 outside the region, Infinity inside)
 * in one dimension, into `d` (Felzenszwalb & Huttenlocher, "Distance Transforms of Sampled
 * Functions", 2012): the lower envelope of the parabolas (q - p)² + f(p) rooted at the finite
 * samples p; `v` holds the envelope's roots, `z` the boundaries between them. A line without a
 * finite sample stays Infinity.
 */
function edt1(f: Float64Array, n: number, d: Float64Array, v: Int32Array, z: Float64Array): void {
  let k = -1
  for (let q = 0; q < n; q++) {
    if (f[q] === Number.POSITIVE_INFINITY) continue
    // Where the parabola at q falls below the envelope's last one; drop those it hides entirely.
    let s = Number.NEGATIVE_INFINITY
    while (k >= 0) {
      const p = v[k]
      s = (f[q] + q * q - (f[p] + p * p)) / (2 * (q - p))
      if (s > z[k]) break
      k--
    }
    k++
    v[k] = q
    z[k] = k === 0 ? Number.NEGATIVE_INFINITY : s
    z[k + 1] = Number.POSITIVE_INFINITY
  }
  if (k < 0) {
    d.fill(Number.POSITIVE_INFINITY, 0, n)
    return
  }
  for (let q = 0, j = 0; q < n; q++) {
    while (z[j + 1] < q) j++
    d[q] = (q - v[j]) * (q - v[j]) + f[v[j]]
  }
}

/**
 * Squared distance of each pixel of `region` (w×h, nonzero = in the region) to the nearest pixel
 * outside it, the image padded with a 1-pixel border outside the region; 0 outside the region.
 * Exact: columns, then rows, each an exact 1-D transform (squared distances are separable).
 * @example squaredDistances(Uint8Array.of(1, 1, 1), 3, 1) // [1, 1, 1]: each pixel is 1 from the border above
 */
export function squaredDistances(region: Uint8Array, w: number, h: number): Float64Array {
  const W = w + 2
  const H = h + 2
  const g = new Float64Array(W * H)
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) if (region[y * w + x]) g[(y + 1) * W + x + 1] = Number.POSITIVE_INFINITY
  const n = Math.max(W, H)
  const f = new Float64Array(n)
  const d = new Float64Array(n)
  const v = new Int32Array(n)
  const z = new Float64Array(n + 1)
  for (let x = 0; x < W; x++) {
    for (let y = 0; y < H; y++) f[y] = g[y * W + x]
    edt1(f, H, d, v, z)
    for (let y = 0; y < H; y++) g[y * W + x] = d[y]
  }
  const out = new Float64Array(w * h)
  for (let y = 1; y <= h; y++) {
    edt1(g.subarray(y * W, (y + 1) * W), W, d, v, z)
    for (let x = 1; x <= w; x++) out[(y - 1) * w + x - 1] = d[x]
  }
  return out
}

/** The first pixel (row-major) where `dist` is largest, and that value (0 when it is empty). */
function farthest(dist: Float64Array): { at: number; value: number } {
  let at = 0
  for (let i = 1; i < dist.length; i++) if (dist[i] > dist[at]) at = i
  return { at, value: dist[at] ?? 0 }
}

/**
 * The next click on a prediction, or null when it has no error left to click.
 * @param truth 1 = foreground (truth ≥ 0.5)
 * @param pred 1 = foreground (alpha ≥ 0.5, i.e. ≥ 128 of 255)
 * @param scored 1 = scored, 0 = ignored (GrabCut's band); null: every pixel
 * @param clicked 1 = clicked before (left out of both regions); null: none
 * @example nextClick(truth, pred, null, null, width, height) // { row, col, positive }
 */
export function nextClick(
  truth: Uint8Array,
  pred: Uint8Array,
  scored: Uint8Array | null,
  clicked: Uint8Array | null,
  width: number,
  height: number,
): Click | null {
  const fn = new Uint8Array(width * height)
  const fp = new Uint8Array(width * height)
  for (let i = 0; i < fn.length; i++) {
    if (scored && !scored[i]) continue
    fn[i] = truth[i] && !pred[i] ? 1 : 0
    fp[i] = !truth[i] && pred[i] ? 1 : 0
  }
  // As RITM: the clicked pixels stay in the regions for the transform and only lose their distance.
  const fnDist = squaredDistances(fn, width, height)
  const fpDist = squaredDistances(fp, width, height)
  if (clicked)
    for (let i = 0; i < clicked.length; i++)
      if (clicked[i]) {
        fnDist[i] = 0
        fpDist[i] = 0
      }
  const fnMax = farthest(fnDist)
  const fpMax = farthest(fpDist)
  if (fnMax.value === 0 && fpMax.value === 0) return null
  // Squared distances compare as the distances do, and exactly (integers).
  const positive = fnMax.value > fpMax.value
  const at = positive ? fnMax.at : fpMax.at
  return { row: Math.floor(at / width), col: at % width, positive }
}

/**
 * A click as the API takes it: normalised to the pixel's centre.
 * @example toPoint({ row: 0, col: 1, positive: true }, 4, 2) // { x: 0.375, y: 0.25, label: 'foreground' }
 */
export function toPoint(click: Click, width: number, height: number): RefinementPoint {
  return {
    x: (click.col + 0.5) / width,
    y: (click.row + 0.5) / height,
    label: click.positive ? 'foreground' : 'background',
  }
}
