/**
 * @module
 * Presigned R2 uploads (DESIGN.md §1): where R2's S3 credentials are configured, `uploadUrl` is a
 * short-lived SigV4 query-signed PUT straight to the bucket, bound to one Content-Type, so large
 * files go from the browser to storage without passing through the Worker. Signing is aws4fetch's.
 */
import { AwsClient } from 'aws4fetch'
import type { Env } from '../env'

/** Long enough for a 50 MB upload on a slow link, short enough to be useless if leaked later. */
export const PRESIGN_TTL_SECONDS = 15 * 60

export type PresignEnv = Pick<Env, 'R2_ACCOUNT_ID' | 'R2_ACCESS_KEY_ID' | 'R2_SECRET_ACCESS_KEY' | 'R2_BUCKET_NAME'>

export function presignConfigured(env: PresignEnv): boolean {
  return Boolean(env.R2_ACCOUNT_ID && env.R2_ACCESS_KEY_ID && env.R2_SECRET_ACCESS_KEY && env.R2_BUCKET_NAME)
}

/** The object's S3 endpoint URL (path style, as R2 serves it). */
export function objectUrl(env: PresignEnv, key: string): string {
  return `https://${env.R2_ACCOUNT_ID}.r2.cloudflarestorage.com/${env.R2_BUCKET_NAME}/${key.split('/').map(encodeURIComponent).join('/')}`
}

/**
 * A PUT URL for `key` that R2 accepts only with this exact `Content-Type` header, until it expires.
 * `datetime` (YYYYMMDDTHHMMSSZ) is for reproducible tests.
 */
export async function presignPut(
  env: PresignEnv,
  key: string,
  contentType: string,
  datetime?: string,
): Promise<string> {
  const client = new AwsClient({
    accessKeyId: env.R2_ACCESS_KEY_ID!,
    secretAccessKey: env.R2_SECRET_ACCESS_KEY!,
    service: 's3',
    region: 'auto',
  })
  const url = new URL(objectUrl(env, key))
  url.searchParams.set('X-Amz-Expires', String(PRESIGN_TTL_SECONDS))
  const signed = await client.sign(url.toString(), {
    method: 'PUT',
    headers: { 'content-type': contentType },
    aws: { signQuery: true, allHeaders: true, ...(datetime ? { datetime } : {}) },
  })
  return signed.url
}
