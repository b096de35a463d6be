/**
 * @module
 * R2 writes that also say what was written: the length and the SHA-256 a later inference call is
 * signed over, computed while the bytes stream through (no 50 MB buffer in the Worker).
 *
 * Every streamed write goes through `putHashed`, which hands R2 (and the digest) pieces of
 * `STORE_PIECE_BYTES`, not the chunks the body arrives in: a subrequest's body arrives in 4 KiB
 * chunks, and a 200 MB export written chunk by chunk cost the runtime 50,000 writes, each a trip
 * through the stream machinery here and through local mode's R2 (docs/decisions.md, "Large results").
 */
import { toBase64Url } from './crypto'

export interface StoredBytes {
  size: number
  /** base64url SHA-256 of the bytes. */
  sha256: string
}

/**
 * What the Worker gathers before a write to R2. One piece is written while the next is gathered,
 * so a write holds at most two pieces, whatever the object's size.
 */
export const STORE_PIECE_BYTES = 1024 * 1024

/**
 * Streams `length` bytes into `key` in pieces of `STORE_PIECE_BYTES`, hashing them on the way. A
 * body that ends early or runs long fails the put (R2 needs the length up front), so nothing
 * truncated is stored.
 */
export async function putHashed(
  bucket: R2Bucket,
  key: string,
  body: ReadableStream<Uint8Array>,
  length: number,
  contentType: string,
): Promise<StoredBytes> {
  const fixed = new FixedLengthStream(length)
  const stored = bucket.put(key, fixed.readable, { httpMetadata: { contentType } })
  const digest = new crypto.DigestStream('SHA-256')
  // A failed write aborts the digest: its rejection is expected then, not unhandled.
  digest.digest.catch(() => undefined)
  const hasher = digest.getWriter()
  const writer = fixed.writable.getWriter()
  try {
    for await (const piece of pieces(body, STORE_PIECE_BYTES)) {
      await hasher.write(piece)
      await writer.write(piece)
      // A timer between pieces: workerd looks for new connections only when no work is ready, and
      // copying a large result in memory (here, and in local mode's R2) would otherwise keep work
      // ready for seconds, every other request of the process waiting (issue 30.1).
      await new Promise((resolve) => setTimeout(resolve, 0))
    }
    await Promise.all([hasher.close(), writer.close()])
    await stored
  } catch (err) {
    await Promise.all([hasher.abort(err), writer.abort(err)]).catch(() => undefined)
    await stored.catch(() => undefined)
    throw err
  }
  return { size: length, sha256: toBase64Url(await digest.digest) }
}

/**
 * The bytes of `body` regathered into arrays of `size` (the last one shorter): each a fresh array,
 * owned by whoever takes it. The body is read only as fast as the pieces are taken.
 */
export async function* pieces(body: ReadableStream<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  const reader = body.getReader()
  let piece = new Uint8Array(size)
  let filled = 0
  let ended = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) {
        ended = true
        break
      }
      let offset = 0
      while (offset < value.byteLength) {
        const take = Math.min(size - filled, value.byteLength - offset)
        piece.set(value.subarray(offset, offset + take), filled)
        filled += take
        offset += take
        if (filled === size) {
          yield piece
          piece = new Uint8Array(size)
          filled = 0
        }
      }
    }
    if (filled) yield piece.subarray(0, filled)
  } finally {
    // Taken no further (the write failed): the rest of the body is not wanted.
    if (!ended) await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
}

/** Copies an object to a new key; null when the source is gone. */
export async function copyHashed(bucket: R2Bucket, from: string, to: string): Promise<StoredBytes | null> {
  const object = await bucket.get(from)
  if (!object) return null
  const contentType = object.httpMetadata?.contentType ?? 'application/octet-stream'
  return putHashed(bucket, to, object.body, object.size, contentType)
}

/** Deletes every object under `prefix`, a page at a time (a project's bytes, a job's sources). */
export async function deleteByPrefix(bucket: R2Bucket, prefix: string): Promise<void> {
  let cursor: string | undefined
  do {
    const page = await bucket.list({ prefix, cursor })
    if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key))
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor)
}

/**
 * Runs `work`, which stores a request's bytes under `prefix` (a streamed multipart body's files, a
 * fetched `sourceUrl`), and deletes them when it ends, however it ends, unless `kept` says a row
 * now owns them (given `work`'s result, or undefined when it threw). The one clean-up of staged
 * bytes: a refused, failed or replayed request leaves nothing stored.
 */
export async function withStaging<T>(
  bucket: R2Bucket,
  prefix: string,
  work: () => Promise<T>,
  kept: (result: T | undefined) => Promise<boolean>,
): Promise<T> {
  let result: T | undefined
  try {
    result = await work()
    return result
  } finally {
    if (!(await kept(result))) await deleteByPrefix(bucket, prefix)
  }
}
