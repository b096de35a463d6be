/**
 * @module
 * Source images into R2. Bytes are checked by signature and header dimensions before they are
 * kept, hashed on the way in (the inference call is signed over that hash), and streamed when
 * their length is known so the Worker never holds a 50 MB image it does not have to.
 */
import { ApiError } from '../errors'
import { concatBytes } from '../lib/bytes'
import {
  checkImageBytes,
  checkSniffedImage,
  type ImageRefusal,
  MAX_IMAGE_BYTES,
  SNIFF_BYTES,
  sniffImage,
} from '../lib/image-sniff'
import { toBase64Url } from '../lib/crypto'
import { putHashed } from '../lib/storage'
import type { FileSink } from '../lib/multipart-stream'
import type { StoredObject } from '../jobs/kind'

/** A source image as stored: the object, and the type its header says it is. */
export interface StoredSource extends StoredObject {
  mimeType: string
}

/** Throws a refusal of an image (src/lib/image-sniff.ts words them) as the API's error. */
function refuse(refusal: ImageRefusal | null, field?: string): void {
  if (refusal) throw new ApiError(refusal.code, refusal.message, { field })
}

/** Refuses what is plainly not a supported image, before anything is stored. */
export function checkImageHead(head: Uint8Array, field?: string): { mimeType: string } {
  const sniffed = sniffImage(head)
  refuse(checkSniffedImage(sniffed), field)
  return { mimeType: sniffed!.mimeType } // checkSniffedImage refuses what is not an image
}

export async function storeBytes(
  bucket: R2Bucket,
  key: string,
  bytes: Uint8Array,
  field?: string,
): Promise<StoredSource> {
  refuse(checkImageBytes(bytes.byteLength))
  const { mimeType } = checkImageHead(bytes.subarray(0, SNIFF_BYTES), field)
  const sha256 = toBase64Url(await crypto.subtle.digest('SHA-256', bytes))
  await bucket.put(key, bytes, { httpMetadata: { contentType: mimeType }, customMetadata: { sha256 } })
  return { key, size: bytes.byteLength, sha256, mimeType }
}

/**
 * Streams a body of declared length into R2: the head is sniffed first, then the whole goes
 * through `putHashed` (hashed on the way, in pieces; R2 needs the length up front). A body that
 * ends early or runs long fails the put, so a truncated upload is never stored.
 */
export async function storeStream(
  bucket: R2Bucket,
  key: string,
  body: ReadableStream<Uint8Array>,
  length: number,
): Promise<StoredSource> {
  refuse(checkImageBytes(length))
  const reader = body.getReader()
  const head: Uint8Array[] = []
  let headSize = 0
  let done = false
  while (headSize < Math.min(SNIFF_BYTES, length) && !done) {
    const r = await reader.read()
    if (r.done) done = true
    else {
      head.push(r.value)
      headSize += r.value.byteLength
    }
  }
  const { mimeType } = checkImageHead(concatBytes(head, headSize))
  if (headSize > length || (done && headSize < length)) {
    throw new ApiError('invalid_input', `Expected ${length} bytes (Content-Length) but received ${headSize}`)
  }
  const replay = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk)
      if (done) controller.close()
    },
    async pull(controller) {
      const r = await reader.read()
      if (r.done) controller.close()
      else controller.enqueue(r.value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  try {
    const { sha256 } = await putHashed(bucket, key, replay, length, mimeType)
    return { key, size: length, sha256, mimeType }
  } catch (err) {
    await bucket.delete(key).catch(() => undefined)
    throw new ApiError('invalid_input', `The upload did not match its Content-Length of ${length} bytes`, {
      cause: err,
    })
  }
}

/**
 * The size of every part but the last of an R2 multipart upload: R2 wants them equal and at least
 * 5 MiB. It is also what the Worker holds of an image streamed in at any time.
 */
export const R2_PART_BYTES = 5 * 1024 * 1024

/**
 * A multipart file part streamed into R2 at `key` as it is read. Its length is not known in
 * advance, so R2's `put` cannot take it as a stream: the bytes go up in fixed `R2_PART_BYTES`
 * parts of an R2 multipart upload (one plain `put` for a smaller image), hashed on the way, so the
 * Worker holds at most one part. The head is sniffed before a byte is stored. Over the size limit
 * `write` throws at once (the reader stops reading the body); a part that is plainly not an image
 * is dropped and its problem kept in `refusal`, for the route to raise once the other parts were
 * read (a bad `options` is named first, as when the body was parsed whole).
 */
export class StagedPart implements FileSink {
  /** What was stored, once the part ended and passed. */
  stored: StoredSource | null = null
  refusal: ApiError | null = null
  private size = 0
  private chunks: Uint8Array[] = []
  private buffered = 0
  private mimeType: string | null = null
  private upload: R2MultipartUpload | null = null
  private readonly parts: R2UploadedPart[] = []
  private readonly digest = new crypto.DigestStream('SHA-256')
  private readonly hasher = this.digest.getWriter()

  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    readonly field: string,
  ) {
    // An aborted or refused part never reads its digest: its rejection is expected, not unhandled.
    this.digest.digest.catch(() => undefined)
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.size += chunk.byteLength
    if (this.size > MAX_IMAGE_BYTES) {
      throw new ApiError('image_too_large', `Expected at most ${MAX_IMAGE_BYTES} bytes for ${this.field}`, {
        field: this.field,
      })
    }
    if (this.refusal) return
    this.chunks.push(chunk)
    this.buffered += chunk.byteLength
    if (!this.mimeType && this.buffered >= SNIFF_BYTES && !this.sniff()) return
    await this.hasher.write(chunk)
    while (this.mimeType && this.buffered >= R2_PART_BYTES) await this.sendPart(this.take(R2_PART_BYTES))
  }

  async close(): Promise<void> {
    if (this.refusal || (!this.mimeType && !this.sniff())) return
    await this.hasher.close()
    const sha256 = toBase64Url(await this.digest.digest)
    const contentType = this.mimeType!
    if (!this.upload) {
      // Smaller than one part: one plain put, as a buffered image always was.
      await this.bucket.put(this.key, this.take(this.buffered), {
        httpMetadata: { contentType },
        customMetadata: { sha256 },
      })
      this.stored = { key: this.key, size: this.size, sha256, mimeType: contentType }
      return
    }
    try {
      if (this.buffered) await this.sendPart(this.take(this.buffered))
      await this.upload.complete(this.parts)
      this.stored = { key: this.key, size: this.size, sha256, mimeType: contentType }
    } catch (err) {
      await this.abort()
      throw err
    }
  }

  async abort(): Promise<void> {
    await this.hasher.abort().catch(() => undefined)
    await this.upload?.abort().catch(() => undefined)
    this.upload = null
    this.chunks = []
  }

  /** Checks the head held so far; false (and the bytes dropped) when it is refused. */
  private sniff(): boolean {
    const head = concatBytes(this.chunks, this.buffered).subarray(0, SNIFF_BYTES)
    try {
      this.mimeType = checkImageHead(head, this.field).mimeType
      return true
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      this.refusal = err
      this.chunks = []
      this.buffered = 0
      return false
    }
  }

  private async sendPart(bytes: Uint8Array): Promise<void> {
    this.upload ??= await this.bucket.createMultipartUpload(this.key, { httpMetadata: { contentType: this.mimeType! } })
    this.parts.push(await this.upload.uploadPart(this.parts.length + 1, bytes))
  }

  /** The first `size` bytes held, as one array; the rest stay held. */
  private take(size: number): Uint8Array {
    const out = concatBytes(this.chunks, size)
    let rest = this.buffered - size
    const kept: Uint8Array[] = []
    for (let i = this.chunks.length - 1; i >= 0 && rest > 0; i--) {
      const chunk = this.chunks[i]
      kept.unshift(chunk.byteLength <= rest ? chunk : chunk.subarray(chunk.byteLength - rest))
      rest -= Math.min(chunk.byteLength, rest)
    }
    this.chunks = kept
    this.buffered -= size
    return out
  }
}

/**
 * Checks an object that reached R2 without passing through the Worker (a presigned PUT) the same
 * way a proxied upload is checked: size, signature and header dimensions; then hashes it. An
 * object that fails is deleted, so nothing unchecked stays stored.
 */
export async function verifyStoredObject(bucket: R2Bucket, key: string): Promise<StoredSource | null> {
  const head = await bucket.head(key)
  if (!head) return null
  try {
    refuse(checkImageBytes(head.size))
    const first = await bucket.get(key, { range: { offset: 0, length: Math.min(SNIFF_BYTES, head.size) } })
    const { mimeType } = checkImageHead(new Uint8Array(await first!.arrayBuffer()))
    const whole = await bucket.get(key)
    const digest = new crypto.DigestStream('SHA-256')
    await whole!.body.pipeTo(digest)
    return { key, size: head.size, sha256: toBase64Url(await digest.digest), mimeType }
  } catch (err) {
    await bucket.delete(key)
    throw err
  }
}
