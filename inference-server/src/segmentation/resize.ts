/**
 * The bilinear resize @imgly/background-removal-node 1.4.5 uses (its `tensorResizeBilinear`),
 * ported to flat typed arrays. It is not the half-pixel-centred bilinear of libvips: sample x of
 * the output reads source position x * (srcWidth / dstWidth), corners aligned top-left, and
 * rounds each value. We copy it on purpose, in the same floating-point order: it is what makes our
 * masks match the reference package's (the promise the tests check), and sharp's kernels do not.
 */

export interface ResizeTable {
  /** Left (or top) source index per output column (or row). */
  lo: Int32Array
  /** Right (or bottom) source index, clamped to the last one. */
  hi: Int32Array
  /** Weight of `hi`: the fractional part of the source position. */
  frac: Float64Array
}

/** Precomputes, for one axis, the two taps and weight of every output index. */
export function resizeTable(srcSize: number, dstSize: number): ResizeTable {
  const scale = srcSize / dstSize
  const lo = new Int32Array(dstSize)
  const hi = new Int32Array(dstSize)
  const frac = new Float64Array(dstSize)
  for (let i = 0; i < dstSize; i++) {
    const src = i * scale
    lo[i] = Math.max(Math.floor(src), 0)
    hi[i] = Math.min(Math.ceil(src), srcSize - 1)
    frac[i] = src - lo[i]
  }
  return { lo, hi, frac }
}

/**
 * Resizes a 1-channel 8-bit plane with the reference bilinear.
 * @example resizePlane(mask1024, 1024, 1024, 512, 512) // Uint8Array(512 * 512)
 */
export function resizePlane(
  src: Uint8Array,
  srcWidth: number,
  srcHeight: number,
  dstWidth: number,
  dstHeight: number,
): Uint8Array {
  const out = new Uint8Array(dstWidth * dstHeight)
  const xs = resizeTable(srcWidth, dstWidth)
  const ys = resizeTable(srcHeight, dstHeight)
  for (let y = 0; y < dstHeight; y++) {
    const row1 = ys.lo[y] * srcWidth
    const row2 = ys.hi[y] * srcWidth
    const dy = ys.frac[y]
    const o = y * dstWidth
    for (let x = 0; x < dstWidth; x++) {
      const x1 = xs.lo[x]
      const x2 = xs.hi[x]
      const dx = xs.frac[x]
      // Same expression and order as the reference, so rounding agrees bit for bit.
      const v =
        (1 - dx) * (1 - dy) * src[row1 + x1] +
        dx * (1 - dy) * src[row1 + x2] +
        (1 - dx) * dy * src[row2 + x1] +
        dx * dy * src[row2 + x2]
      out[o + x] = Math.round(v)
    }
  }
  return out
}
