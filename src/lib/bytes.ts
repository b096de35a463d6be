/**
 * @module
 * Byte arrays gathered from a stream's chunks, one way for every place that holds a bounded body
 * (a sniffed image head, a capped JSON body, a guarded fetch's answer, an upload's pieces).
 */

/** The first `size` bytes of `chunks` as one array (all of them when `size` is their total). */
export function concatBytes(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size)
  let offset = 0
  for (const c of chunks) {
    if (offset >= size) break
    const piece = c.byteLength <= size - offset ? c : c.subarray(0, size - offset)
    out.set(piece, offset)
    offset += piece.byteLength
  }
  return out
}
