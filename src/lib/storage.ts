/**
 * @module
 * R2 writes that also say what was written: the length and the SHA-256 a later inference call is
 * signed over, computed while the bytes stream through (no 50 MB buffer in the Worker).
 */
import { toBase64Url } from './crypto'

export interface StoredBytes {
  size: number
  /** base64url SHA-256 of the bytes. */
  sha256: string
}

/** Streams `length` bytes into `key`, hashing them on the way. */
export async function putHashed(
  bucket: R2Bucket,
  key: string,
  body: ReadableStream<Uint8Array>,
  length: number,
  contentType: string,
): Promise<StoredBytes> {
  const [toStore, toHash] = body.tee()
  const digest = new crypto.DigestStream('SHA-256')
  const [, hash] = await Promise.all([
    bucket.put(key, toStore.pipeThrough(new FixedLengthStream(length)), {
      httpMetadata: { contentType },
    }),
    toHash.pipeTo(digest).then(() => digest.digest),
  ])
  return { size: length, sha256: toBase64Url(hash) }
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
