/**
 * @module
 * Direct uploads (SPEC.md §4): reserve, put bytes, complete. In local mode `uploadUrl` is the
 * API path of the content route; `complete` has the inference server decode what landed.
 */
import { ApiError } from '../errors'
import { HOUR_MS, iso } from '../lib/time'
import { UPLOAD_CONTENT_TYPES, type Upload } from '../schemas/upload'
import { type InferenceCall, inspectStored } from './inference'
import { presignConfigured, presignPut, type PresignEnv } from './presign'
import { storeStream, verifyStoredObject } from './sources'
import type { uploads } from '../db/schema'
import type { D1Row } from '../db/rows'

/** A reservation is short-lived; a client that does not finish within it starts again. */
export const UPLOAD_TTL_MS = HOUR_MS

export type UploadRow = D1Row<typeof uploads>

export function toUpload(row: UploadRow): Upload {
  return {
    id: row.id,
    status: row.status,
    expiresAt: row.expires_at,
    uploadUrl: `/v1/uploads/${row.id}/content`,
    ...(row.width ? { width: row.width } : {}),
    ...(row.height ? { height: row.height } : {}),
    ...(row.mime_type && row.status === 'ready' ? { mimeType: row.mime_type } : {}),
  }
}

/**
 * Reserves an upload. With R2 credentials configured the `uploadUrl` is a presigned PUT bound to
 * `contentType` (sent back in `uploadHeaders`); otherwise it is this API's content route.
 */
export async function createUpload(
  env: { DB: D1Database } & PresignEnv,
  workspaceId: string,
  contentType = 'application/octet-stream',
): Promise<Upload> {
  const db = env.DB
  const id = crypto.randomUUID()
  const row: UploadRow = {
    id,
    workspace_id: workspaceId,
    status: 'pending',
    object_key: `uploads/${id}`,
    byte_size: null,
    sha256: null,
    width: null,
    height: null,
    mime_type: null,
    expires_at: iso(Date.now() + UPLOAD_TTL_MS),
    created_at: iso(),
  }
  await db
    .prepare('INSERT INTO uploads (id, workspace_id, status, object_key, expires_at) VALUES (?, ?, ?, ?, ?)')
    .bind(row.id, row.workspace_id, row.status, row.object_key, row.expires_at)
    .run()
  if (!presignConfigured(env)) return toUpload(row)
  return {
    ...toUpload(row),
    uploadUrl: await presignPut(env, row.object_key, contentType),
    uploadHeaders: { 'content-type': contentType },
  }
}

export async function findUpload(db: D1Database, workspaceId: string, id: string, field?: string): Promise<UploadRow> {
  const row = await db
    .prepare('SELECT * FROM uploads WHERE id = ? AND workspace_id = ?')
    .bind(id, workspaceId)
    .first<UploadRow>()
  if (!row) throw noSuchUpload(id, field)
  return row
}

/**
 * An upload that does not exist in the workspace (never did, or the retention sweep removed it):
 * 400 on the request `field` that names it, else 404 for the upload's own routes.
 */
export function noSuchUpload(id: string, field?: string): ApiError {
  if (field) return new ApiError('invalid_input', `No upload ${id} in this workspace`, { field })
  return new ApiError('upload_not_found', `No upload ${id} in this workspace`)
}

/**
 * The one rule of a ready upload (SPEC.md §4): completed, so its bytes are stored, hashed and
 * decoded. {@link READY_UPLOAD_SQL} is the same rule for a query; keep the two together.
 */
export type ReadyUpload = UploadRow & { status: 'ready'; sha256: string; byte_size: number }

export function isReady(row: UploadRow): row is ReadyUpload {
  return row.status === 'ready' && row.sha256 !== null && row.byte_size !== null
}

const READY_UPLOAD_SQL = `status = 'ready' AND sha256 IS NOT NULL AND byte_size IS NOT NULL`

/** An upload named by a request, and the field that names it (`uploadId`, `uploadIds.3`, …). */
export interface UploadRef {
  id: string
  field: string
}

/**
 * The named uploads of the workspace, each ready, in the order named; else the problem naming the
 * first that does not exist (400 on its field) or is not ready.
 */
export async function readyUploads(db: D1Database, workspaceId: string, refs: UploadRef[]): Promise<ReadyUpload[]> {
  const { results } = await db
    .prepare(`SELECT * FROM uploads WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))`)
    .bind(workspaceId, JSON.stringify(refs.map((r) => r.id)))
    .all<UploadRow>()
  const byId = new Map(results.map((u) => [u.id, u]))
  return refs.map(({ id, field }) => {
    const upload = byId.get(id)
    if (!upload) throw noSuchUpload(id, field)
    if (!isReady(upload)) throw new ApiError('invalid_input', `Upload ${id} is not ready; complete it first`, { field })
    return upload
  })
}

/**
 * The condition jobs' inserts (and their credit hold) must meet when their sources are these
 * uploads: every one still exists and is ready. The retention sweep may remove a day-old upload
 * between the request reading it and the jobs being inserted; checked in the insert's own
 * transaction, the jobs are then refused instead of being made over bytes that are gone
 * (`insertJobs`' `guard`), and `refused` is the answer a request naming them now would get.
 */
export function uploadsStillReady(
  db: D1Database,
  workspaceId: string,
  refs: UploadRef[],
): { sql: string; args: unknown[]; refused: () => Promise<ApiError> } {
  const unique = [...new Set(refs.map((r) => r.id))]
  return {
    sql: `(SELECT COUNT(*) FROM uploads WHERE workspace_id = ? AND ${READY_UPLOAD_SQL}
            AND id IN (SELECT value FROM json_each(?))) = ?`,
    args: [workspaceId, JSON.stringify(unique), unique.length],
    refused: async () => {
      await readyUploads(db, workspaceId, refs)
      // Every one is back (it cannot be): name the first, as the request's guard saw it gone.
      return noSuchUpload(refs[0].id, refs[0].field)
    },
  }
}

function assertPending(row: UploadRow): void {
  if (row.status !== 'pending') throw new ApiError('invalid_input', `Upload ${row.id} is already complete`)
  if (Date.parse(row.expires_at) <= Date.now()) {
    throw new ApiError('invalid_input', `Upload ${row.id} expired at ${row.expires_at}; reserve a new one`)
  }
}

/**
 * SPEC.md §4: the bytes come as `application/octet-stream` or an image type; anything else (a
 * `text/plain` from a misconfigured client) is 415 before the body is read. No Content-Type at all
 * is taken as octet-stream (`curl -T` sends none). Parameters (`; charset=…`) are ignored. The
 * bytes' signature, not this label, decides what the image is (docs/decisions.md).
 */
function assertUploadContentType(contentType: string | undefined): void {
  const mediaType = contentType?.split(';')[0].trim().toLowerCase()
  if (!mediaType || (UPLOAD_CONTENT_TYPES as readonly string[]).includes(mediaType)) return
  throw new ApiError(
    'unsupported_media',
    `Expected Content-Type ${UPLOAD_CONTENT_TYPES.join(', ')} but received ${mediaType}`,
    { field: 'Content-Type' },
  )
}

export async function putUploadContent(
  env: { DB: D1Database; BUCKET: R2Bucket },
  workspaceId: string,
  id: string,
  body: ReadableStream<Uint8Array> | null,
  headers: { contentLength: string | undefined; contentType: string | undefined },
): Promise<void> {
  assertUploadContentType(headers.contentType)
  const contentLength = headers.contentLength
  const row = await findUpload(env.DB, workspaceId, id)
  assertPending(row)
  const length = Number(contentLength)
  if (!body || contentLength?.trim() === '0') {
    throw new ApiError('invalid_input', 'The request body was empty: expected the image bytes')
  }
  if (!contentLength || !Number.isInteger(length) || length <= 0) {
    throw new ApiError('invalid_input', 'Expected the image bytes with a Content-Length header', {
      field: 'Content-Length',
    })
  }
  const stored = await storeStream(env.BUCKET, row.object_key, body, length)
  await env.DB.prepare('UPDATE uploads SET byte_size = ?, sha256 = ?, mime_type = ? WHERE id = ?')
    .bind(stored.size, stored.sha256, stored.mimeType, id)
    .run()
}

export async function completeUpload(
  env: { DB: D1Database; BUCKET: R2Bucket; INFERENCE_URL: string; INFERENCE_SIGNING_KEY: string },
  workspaceId: string,
  id: string,
  call: InferenceCall,
): Promise<Upload> {
  const row = await findUpload(env.DB, workspaceId, id)
  if (row.status === 'ready') return toUpload(row)
  assertPending(row)
  // Bytes that came through a presigned URL were never seen by the Worker: check them now.
  const landed = row.sha256 ? { sha256: row.sha256 } : await verifyStoredObject(env.BUCKET, row.object_key)
  const object = landed ? await env.BUCKET.get(row.object_key) : null
  if (!object || !landed) {
    throw new ApiError('invalid_input', `Upload ${id} has no content yet; PUT the bytes to its uploadUrl first`)
  }
  if (!row.sha256) {
    await env.DB.prepare('UPDATE uploads SET byte_size = ?, sha256 = ? WHERE id = ?')
      .bind(object.size, landed.sha256, id)
      .run()
  }
  const info = await inspectStored(call, object, landed.sha256)
  const ready: UploadRow = { ...row, status: 'ready', width: info.width, height: info.height, mime_type: info.mimeType }
  await env.DB.prepare("UPDATE uploads SET status = 'ready', width = ?, height = ?, mime_type = ? WHERE id = ?")
    .bind(info.width, info.height, info.mimeType, id)
    .run()
  return toUpload(ready)
}
