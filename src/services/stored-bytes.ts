/**
 * @module
 * Stored bytes served one way (SPEC.md §8 retention): a job's result, an export, a catalog image
 * and a revision's mask. Metadata outlives bytes: past its `expires_at`, swept by retention, or
 * missing from storage for any reason, a thing that had bytes answers 410 `asset_expired`, never
 * a 500 and never a 404 (which would say it never existed).
 */
import { ApiError } from '../errors'

/** What a row says about its bytes' retention; null `expires_at` means kept (a project's masks). */
export interface Retained {
  expires_at: string | null
  result_deleted_at?: string | null
}

/** Past retention, or swept: the metadata stays, the bytes are gone. The one rule for every kind of stored bytes. */
export function bytesExpired(row: Retained, now = Date.now()): boolean {
  return Boolean(row.result_deleted_at) || (row.expires_at !== null && Date.parse(row.expires_at) <= now)
}

export interface StoredResponse {
  body: ReadableStream
  headers: Record<string, string>
  size: number
}

/**
 * The object at `key` as a response body with its length, after the retention rule: 410
 * `asset_expired` naming `what` when the row is past retention or the object is gone.
 */
export async function serveStored(
  bucket: R2Bucket,
  key: string,
  row: Retained,
  what: string,
  headers: { contentType: string; cacheControl: string },
): Promise<StoredResponse> {
  if (bytesExpired(row)) {
    throw new ApiError('asset_expired', `The bytes of ${what} expired at ${row.expires_at}; its metadata remains`)
  }
  const object = await bucket.get(key)
  if (!object) throw new ApiError('asset_expired', `The bytes of ${what} are no longer stored`)
  return storedBody(object, headers)
}

/** An object read from storage as a response body, with its length and the given type and caching. */
export function storedBody(
  object: R2ObjectBody,
  headers: { contentType: string; cacheControl: string },
): StoredResponse {
  return {
    body: object.body,
    size: object.size,
    headers: {
      'content-type': headers.contentType,
      'content-length': String(object.size),
      'cache-control': headers.cacheControl,
    },
  }
}
