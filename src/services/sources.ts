/**
 * @module
 * Source images into R2. Bytes are checked by signature and header dimensions before they are
 * kept, hashed on the way in (the inference call is signed over that hash), and streamed when
 * their length is known so the Worker never holds a 50 MB image it does not have to.
 */
import { ApiError } from '../errors'
import { MAX_IMAGE_BYTES, MAX_PIXELS, MIN_SIDE, SNIFF_BYTES, sniffImage } from '../lib/image-sniff'
import { toBase64Url } from '../lib/crypto'

export interface StoredSource {
  key: string
  size: number
  /** base64url SHA-256 of the bytes. */
  sha256: string
  mimeType: string
}

export function tooLarge(size: number): ApiError {
  return new ApiError('image_too_large', `Expected at most ${MAX_IMAGE_BYTES} bytes but received ${size}`)
}

/** Refuses what is plainly not a supported image, before anything is stored. */
export function checkImageHead(head: Uint8Array, field?: string): { mimeType: string } {
  const sniffed = sniffImage(head)
  if (!sniffed) {
    throw new ApiError('unsupported_media', 'Expected a JPEG, PNG, WebP, AVIF, HEIC or HEIF image', { field })
  }
  const { width, height } = sniffed
  if (width && height) {
    if (width * height > MAX_PIXELS) {
      throw new ApiError('image_too_large', `Expected at most 25 megapixels but the image is ${width}×${height}`, {
        field,
      })
    }
    if (width < MIN_SIDE || height < MIN_SIDE) {
      throw new ApiError(
        'invalid_input',
        `Expected at least ${MIN_SIDE}×${MIN_SIDE} pixels but the image is ${width}×${height}`,
        { field },
      )
    }
  }
  return { mimeType: sniffed.mimeType }
}

export async function storeBytes(
  bucket: R2Bucket,
  key: string,
  bytes: Uint8Array,
  field?: string,
): Promise<StoredSource> {
  if (bytes.byteLength > MAX_IMAGE_BYTES) throw tooLarge(bytes.byteLength)
  const { mimeType } = checkImageHead(bytes.subarray(0, SNIFF_BYTES), field)
  const sha256 = toBase64Url(await crypto.subtle.digest('SHA-256', bytes))
  await bucket.put(key, bytes, { httpMetadata: { contentType: mimeType }, customMetadata: { sha256 } })
  return { key, size: bytes.byteLength, sha256, mimeType }
}

/**
 * Streams a body of declared length into R2: the head is sniffed first, then the rest flows
 * through a SHA-256 digest and a FixedLengthStream (R2 needs the length up front). A body that
 * ends early or runs long fails the put, so a truncated upload is never stored.
 */
export async function storeStream(
  bucket: R2Bucket,
  key: string,
  body: ReadableStream<Uint8Array>,
  length: number,
): Promise<StoredSource> {
  if (length > MAX_IMAGE_BYTES) throw tooLarge(length)
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
  const { mimeType } = checkImageHead(concat(head, headSize))
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
  const [toDigest, toStore] = replay.tee()
  const digest = new crypto.DigestStream('SHA-256')
  const fixed = new FixedLengthStream(length)
  try {
    const [hash] = await Promise.all([
      toDigest.pipeTo(digest).then(() => digest.digest),
      toStore.pipeTo(fixed.writable),
      bucket.put(key, fixed.readable, { httpMetadata: { contentType: mimeType } }),
    ])
    const sha256 = toBase64Url(hash)
    return { key, size: length, sha256, mimeType }
  } catch (err) {
    await bucket.delete(key).catch(() => undefined)
    throw new ApiError('invalid_input', `The upload did not match its Content-Length of ${length} bytes`, {
      cause: err,
    })
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size)
  let offset = 0
  for (const c of chunks) {
    out.set(c, offset)
    offset += c.byteLength
  }
  return out
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
    if (head.size > MAX_IMAGE_BYTES) throw tooLarge(head.size)
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
