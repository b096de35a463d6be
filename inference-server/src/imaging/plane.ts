/**
 * Rectangles of interleaved 8-bit planes: an RGB image (3 channels) and its mask (1) are cut with
 * the same rectangle, so one copy serves both.
 */

/**
 * Copies `rect` (`x`, `y` its top left; render/crop.ts `Rect`) out of a plane `width` pixels wide
 * with `channels` per pixel, row by row.
 * @example cropPlane(mask.data, mask.width, 1, { x: 2, y: 2, width: 4, height: 4 }).length // 16
 */
export function cropPlane(
  data: Uint8Array,
  width: number,
  channels: number,
  rect: { x: number; y: number; width: number; height: number },
): Uint8Array {
  const out = new Uint8Array(rect.width * rect.height * channels)
  const rowBytes = rect.width * channels
  for (let y = 0; y < rect.height; y++) {
    const from = ((rect.y + y) * width + rect.x) * channels
    out.set(data.subarray(from, from + rowBytes), y * rowBytes)
  }
  return out
}
