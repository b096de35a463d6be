import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import { presignPut } from '../../src/services/presign'
import { createUpload } from '../../src/services/uploads'
import { api, expectProblem, fixtureBytes, seedWorkspace } from './helpers'

const R2 = {
  R2_ACCOUNT_ID: 'acc0123456789',
  R2_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  R2_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  R2_BUCKET_NAME: 'cutout-assets',
}

const enc = new TextEncoder()
const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('')
const sha256 = async (s: string) => hex(await crypto.subtle.digest('SHA-256', enc.encode(s)))
async function hmac(key: ArrayBuffer | Uint8Array, msg: string) {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return crypto.subtle.sign('HMAC', k, enc.encode(msg))
}

/** SigV4 query signing written out from the AWS spec, independent of aws4fetch. */
async function expectedSignature(url: URL, contentType: string, secret: string) {
  const q = url.searchParams
  const datetime = q.get('X-Amz-Date')!
  const date = datetime.slice(0, 8)
  const canonicalQuery = [...q.entries()]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [encodeURIComponent(k), encodeURIComponent(v)])
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  const canonical = [
    'PUT',
    url.pathname,
    canonicalQuery,
    `content-type:${contentType}`,
    `host:${url.host}`,
    '',
    'content-type;host',
    'UNSIGNED-PAYLOAD',
  ].join('\n')
  const scope = `${date}/auto/s3/aws4_request`
  const toSign = ['AWS4-HMAC-SHA256', datetime, scope, await sha256(canonical)].join('\n')
  let key: ArrayBuffer = await hmac(enc.encode(`AWS4${secret}`), date)
  for (const part of ['auto', 's3', 'aws4_request']) key = await hmac(key, part)
  return hex(await hmac(key, toSign))
}

describe('presigned uploads', () => {
  it('signs a browser PUT with SigV4 query parameters bound to its Content-Type', async () => {
    const url = new URL(await presignPut(R2, 'uploads/abc', 'image/png', '20261122T101500Z'))
    expect(url.origin).toBe('https://acc0123456789.r2.cloudflarestorage.com')
    expect(url.pathname).toBe('/cutout-assets/uploads/abc')
    const q = url.searchParams
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256')
    expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20261122/auto/s3/aws4_request')
    expect(q.get('X-Amz-Date')).toBe('20261122T101500Z')
    expect(q.get('X-Amz-Expires')).toBe('900')
    expect(q.get('X-Amz-SignedHeaders')).toBe('content-type;host')
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/)
    expect(q.get('X-Amz-Signature')).toBe(await expectedSignature(url, 'image/png', R2.R2_SECRET_ACCESS_KEY))
    // A different Content-Type would need a different signature.
    expect(q.get('X-Amz-Signature')).not.toBe(await expectedSignature(url, 'image/jpeg', R2.R2_SECRET_ACCESS_KEY))
  })

  it('reserves with a presigned URL when configured; complete verifies what landed in R2', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const upload = await createUpload({ ...env, ...R2 }, workspaceId, 'image/png')
    expect(upload.uploadUrl).toMatch(/^https:\/\/acc0123456789\.r2\.cloudflarestorage\.com\/cutout-assets\/uploads\//)
    expect(upload.uploadHeaders).toEqual({ 'content-type': 'image/png' })
    // The browser's PUT lands in the bucket directly; here we place the bytes as R2 would.
    await env.BUCKET.put(`uploads/${upload.id}`, await fixtureBytes('astronaut.png'))
    const done = await api(`/v1/uploads/${upload.id}/complete`, { method: 'POST', key })
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({ status: 'ready', width: 512, height: 512, mimeType: 'image/png' })
  })

  it('refuses and deletes landed bytes that are not an image or are too large', async () => {
    const { key, workspaceId } = await seedWorkspace()
    const text = await createUpload({ ...env, ...R2 }, workspaceId)
    await env.BUCKET.put(`uploads/${text.id}`, 'plain text, not a picture')
    await expectProblem(await api(`/v1/uploads/${text.id}/complete`, { method: 'POST', key }), 415, 'unsupported_media')
    expect(await env.BUCKET.head(`uploads/${text.id}`)).toBeNull()

    const big = await createUpload({ ...env, ...R2 }, workspaceId)
    await env.BUCKET.put(`uploads/${big.id}`, new Uint8Array(50 * 1024 * 1024 + 1))
    await expectProblem(await api(`/v1/uploads/${big.id}/complete`, { method: 'POST', key }), 413, 'image_too_large')
    expect(await env.BUCKET.head(`uploads/${big.id}`)).toBeNull()
  })

  it('local mode keeps the API path, and POST /v1/uploads takes an optional strict body', async () => {
    const { key } = await seedWorkspace()
    const res = await api('/v1/uploads', { method: 'POST', key, json: { contentType: 'image/jpeg' } })
    expect(res.status).toBe(201)
    const upload = (await res.json()) as { id: string; uploadUrl: string; uploadHeaders?: unknown }
    expect(upload.uploadUrl).toBe(`/v1/uploads/${upload.id}/content`)
    expect(upload.uploadHeaders).toBeUndefined()
    // It once named /v1/uploads/{id}, which no route answers.
    expect(res.headers.get('location')).toBeNull()
    // Another workspace's key can neither write nor complete it (SPEC.md §5: outside the workspace is 404).
    const stranger = await seedWorkspace()
    const put = await api(upload.uploadUrl, {
      method: 'PUT',
      key: stranger.key,
      body: new Uint8Array(64),
      headers: { 'content-type': 'image/jpeg', 'content-length': '64' },
    })
    await expectProblem(put, 404, 'upload_not_found')
    await expectProblem(
      await api(`/v1/uploads/${upload.id}/complete`, { method: 'POST', key: stranger.key }),
      404,
      'upload_not_found',
    )
    await expectProblem(
      await api('/v1/uploads', { method: 'POST', key, json: { size: 3 } }),
      400,
      'invalid_input',
      'size',
    )
  })
})
