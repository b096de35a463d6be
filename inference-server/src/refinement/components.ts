/**
 * @module
 * Connected regions of a binary plane (4-connected, by flood fill with an explicit stack: a
 * recursive fill overflows on a 25 MP region). The refinement keeps or drops whole regions of the
 * mask that the user's points land on, and accepts a colour cut's changes only where a point
 * vouches for them.
 */

export interface Components {
  /** Per pixel: 0 for pixels outside the plane's set, else the region's number (1…count). */
  labels: Int32Array
  count: number
}

/**
 * Labels the connected regions of the pixels where `inside[i]` is true.
 * @example label(Uint8Array.of(1, 0, 1), 3, 1).count // 2
 */
export function label(inside: Uint8Array, width: number, height: number): Components {
  const labels = new Int32Array(width * height)
  const stack = new Int32Array(width * height)
  let count = 0
  for (let start = 0; start < inside.length; start++) {
    if (!inside[start] || labels[start]) continue
    count++
    labels[start] = count
    let top = 0
    stack[top++] = start
    while (top > 0) {
      const i = stack[--top]
      const x = i % width
      // Left, right, up, down: push each unlabelled neighbour in the set.
      if (x > 0 && inside[i - 1] && !labels[i - 1]) {
        labels[i - 1] = count
        stack[top++] = i - 1
      }
      if (x < width - 1 && inside[i + 1] && !labels[i + 1]) {
        labels[i + 1] = count
        stack[top++] = i + 1
      }
      if (i >= width && inside[i - width] && !labels[i - width]) {
        labels[i - width] = count
        stack[top++] = i - width
      }
      if (i + width < inside.length && inside[i + width] && !labels[i + width]) {
        labels[i + width] = count
        stack[top++] = i + width
      }
    }
  }
  return { labels, count }
}

/**
 * Which regions touch the given sides of the plane (the sides where the refinement region meets
 * mask it may not change: a region that touches one continues outside, and is not an island).
 */
export function touchingSides(
  { labels, count }: Components,
  width: number,
  height: number,
  sides: { left: boolean; top: boolean; right: boolean; bottom: boolean },
): Uint8Array {
  const touches = new Uint8Array(count + 1)
  const mark = (i: number) => {
    touches[labels[i]] = 1
  }
  for (let x = 0; x < width; x++) {
    if (sides.top) mark(x)
    if (sides.bottom) mark((height - 1) * width + x)
  }
  for (let y = 0; y < height; y++) {
    if (sides.left) mark(y * width)
    if (sides.right) mark(y * width + width - 1)
  }
  touches[0] = 0
  return touches
}
