/**
 * @module
 * Catalog images (SPEC.md §4 Catalog images; DESIGN.md §3): one to four references in, a
 * marketplace-ready PNG out, while the client waits. One credit is held under the image's id and
 * charged when the PNG is stored, released otherwise; a call whose Worker died is settled by the
 * sweep (`settleAbandonedCatalogImages`). The bytes are kept 24 hours.
 */
import {
  type CatalogOptions,
  CatalogOptionsSchema,
  type CatalogRequest,
  MAX_REFERENCES,
  randomSeed,
  referenceField,
  referenceFieldOf,
  referencePart,
} from '../contract/catalog'
import { jsonPart } from '../contract/signing'
import type { Env } from '../env'
import { ApiError, issueToApiError } from '../errors'
import { sourcePart } from '../jobs/kind'
import { fromBase64Url, sha256Hex, toHex } from '../lib/crypto'
import { listPage } from '../lib/cursor'
import { putHashed, withStaging } from '../lib/storage'
import { DAY_MS, iso } from '../lib/time'
import type { AuthContext } from './auth'
import { acceptChecks } from './accept'
import { HOLD_RESULT, holdStatements, quotaExhausted, settleStatements } from './credits'
import { ABANDONED_REQUEST_MS } from './deadlines'
import { idempotent } from './idempotency'
import { callNow, type InferenceCall } from './inference'
import { StagedPart, type StoredSource } from './sources'
import { bytesExpired, serveStored, storedBody, type StoredResponse } from './stored-bytes'
import type { catalogImages } from '../db/schema'
import type { D1Row } from '../db/rows'

/** Catalog bytes are kept this long after they are made (SPEC.md §8). */
export const CATALOG_RETENTION_MS = DAY_MS
/**
 * Where one request's references are staged while its call runs (deleted when it ends, made or
 * refused: `makeCatalogImageOnce`). Under `catalog/`, so the bucket's lifecycle rule for catalog bytes (docs/deploy.md) also
 * removes those of a Worker that died mid-call.
 */
const catalogReferencePrefix = (stagingId: string) => `catalog/references/${stagingId}/`

export type CatalogImageRow = D1Row<typeof catalogImages>

export interface MadeCatalogImage {
  id: string
  seed: number
  image: StoredResponse
}

/** How a catalog image's bytes are served, made now or read later. */
const CATALOG_IMAGE_HEADERS = { contentType: 'image/png', cacheControl: 'private, max-age=600' }

/**
 * The multipart parts as sent (text parts as strings, each reference streamed into R2 by the
 * route) → the stored references and the options with every default applied.
 */
export function readCatalogForm(form: Record<string, unknown>): {
  references: StoredSource[]
  options: CatalogOptions
} {
  const files = [form.references].flat().filter((f) => f !== undefined)
  if (files.length < 1 || files.length > MAX_REFERENCES) {
    throw new ApiError('invalid_input', `Expected 1 to ${MAX_REFERENCES} references but received ${files.length}`, {
      field: 'references',
    })
  }
  const references: StoredSource[] = []
  for (const [i, file] of files.entries()) {
    if (!(file instanceof StagedPart)) {
      throw new ApiError('invalid_input', `Expected reference ${i + 1} as a file`, { field: referenceField(i) })
    }
    // Over 50 MB was refused while it streamed; one that is plainly not an image, here.
    if (file.refusal) throw file.refusal
    if (!file.stored) throw new Error(`Expected ${file.field} to be stored once its part ended`)
    references.push(file.stored)
  }
  return { references, options: parseOptions(form) }
}

const INTEGER_PARTS = ['width', 'height', 'steps', 'seed'] as const

function parseOptions(form: Record<string, unknown>): CatalogOptions {
  const raw: Record<string, unknown> = {}
  for (const name of ['prompt', 'background', 'shadow', 'layout', ...INTEGER_PARTS]) {
    const value = form[name]
    if (value === undefined) continue
    if (typeof value !== 'string')
      throw new ApiError('invalid_input', `Expected ${name} once, as text`, { field: name })
    raw[name] = (INTEGER_PARTS as readonly string[]).includes(name) ? toInteger(name, value) : value
  }
  // The seed is chosen here when none is given, so the response can echo it.
  raw.seed ??= randomSeed()
  const parsed = CatalogOptionsSchema.safeParse(raw)
  if (!parsed.success) throw issueToApiError(parsed.error.issues[0])
  return parsed.data
}

function toInteger(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim()))
    throw new ApiError('invalid_input', `Expected ${name} as a whole number`, { field: name })
  return Number(value.trim())
}

/**
 * Makes a catalog image from the multipart parts, once per `Idempotency-Key` and input when the
 * client sends one: a retried request gets the first image back (201, same id, seed and bytes)
 * instead of making and charging a second. The key is optional here (SPEC.md lists none for this
 * route); without one every request makes an image. `read` streams the references into R2 under
 * the prefix it is given; they are staged for this one call only, gone once it ends, made or refused.
 */
export async function makeCatalogImageOnce(
  env: Env,
  auth: AuthContext,
  read: (prefix: string) => Promise<Record<string, unknown>>,
  idempotencyKey: string | undefined,
  call: InferenceCall,
): Promise<MadeCatalogImage> {
  const prefix = catalogReferencePrefix(crypto.randomUUID())
  const made = async () => {
    const form = await read(prefix)
    // Checked before the key is looked at, so every reference is known stored (the fingerprint reads its hash).
    const input = readCatalogForm(form)
    const once = idempotencyKey ? { key: idempotencyKey, fingerprint: () => fingerprint(form) } : undefined
    return makeCatalogImageKeyed(env, auth, input, once, call)
  }
  return withStaging(env.BUCKET, prefix, made, async () => false)
}

/**
 * Makes a catalog image from stored references (the multipart route's, or the MCP tool's ready
 * uploads), once per key and fingerprint when `once` is given: a retry replays the first image.
 */
export async function makeCatalogImageKeyed(
  env: Env,
  auth: AuthContext,
  input: { references: StoredSource[]; options: CatalogOptions },
  once: { key: string; fingerprint: () => Promise<string> } | undefined,
  call: InferenceCall,
): Promise<MadeCatalogImage> {
  if (!once) return makeCatalogImage(env, auth, input, call)
  let made: MadeCatalogImage | undefined
  const stored = await idempotent(
    env.DB,
    auth.workspaceId,
    'catalog-images',
    once.key,
    await once.fingerprint(),
    async () => {
      made = await makeCatalogImage(env, auth, input, call)
      return { status: 201, body: JSON.stringify({ id: made.id }), location: `/v1/catalog-images/${made.id}` }
    },
  )
  if (made) return made
  const { id } = JSON.parse(stored.body) as { id: string }
  const { stored: image, seed } = await readCatalogImage(env, auth.workspaceId, id)
  return { id, seed, image }
}

/**
 * The request as sent, before defaults (a random seed must not make a retry look new). A reference
 * is `file:<hex SHA-256>` of its bytes, from the hash taken while it streamed into R2: the same
 * as when the bytes were held and hashed here, so a retry across that change still replays.
 */
function fingerprint(form: Record<string, unknown>): Promise<string> {
  const parts: [string, string][] = []
  for (const [name, value] of Object.entries(form).sort(([a], [b]) => a.localeCompare(b))) {
    for (const v of [value].flat()) {
      parts.push([
        name,
        v instanceof StagedPart ? `file:${toHex(fromBase64Url(v.stored!.sha256))}` : `text:${String(v)}`,
      ])
    }
  }
  return sha256Hex(JSON.stringify(parts))
}

/** Makes a catalog image: holds a credit, calls the inference server, stores the PNG, settles. */
export async function makeCatalogImage(
  env: Env,
  auth: AuthContext,
  input: { references: StoredSource[]; options: CatalogOptions },
  call: InferenceCall,
): Promise<MadeCatalogImage> {
  const readiness = await acceptChecks(env, call.client, auth.workspaceId, true)
  const id = crypto.randomUUID()
  const key = `catalog/${id}.png`
  const taken = await env.DB.batch([
    ...holdStatements(env.DB, auth.workspaceId, [id]),
    env.DB.prepare(
      `INSERT INTO catalog_images (id, workspace_id, status, options, "references", created_at)
       SELECT ?, ?, 'pending', ?, ?, ? WHERE EXISTS (SELECT 1 FROM credit_holds WHERE job_id = ?)`,
    ).bind(id, auth.workspaceId, JSON.stringify(input.options), input.references.length, iso(), id),
  ])
  if (taken[HOLD_RESULT].meta.changes !== 1) throw quotaExhausted()
  try {
    const request: CatalogRequest = { ...input.options, references: input.references.length }
    // Each reference is read from R2 as a stream of known length and hash, as a job's source is.
    const parts = [
      await jsonPart('options', request),
      ...(await Promise.all(input.references.map((stored, i) => sourcePart(env, referencePart(i), stored)))),
    ]
    const outcome = await callNow(
      call,
      '/v1/catalog',
      parts,
      async (output, body) => {
        const stored = await putHashed(env.BUCKET, key, body, output.length, output.contentType)
        return { ...output, key, ...stored }
      },
      readiness,
    )
    await env.DB.batch([
      ...settleStatements(env.DB, id, 'charge'),
      env.DB.prepare(
        `UPDATE catalog_images SET status = 'succeeded', result_key = ?, model_version = ?, warnings = ?, completed_at = ?, expires_at = ?
         WHERE id = ? AND status = 'pending'`,
      ).bind(
        key,
        outcome.modelVersion,
        JSON.stringify(outcome.warnings),
        iso(),
        iso(Date.now() + CATALOG_RETENTION_MS),
        id,
      ),
    ])
  } catch (err) {
    await failCatalogImage(env, id, err instanceof ApiError ? err.code : 'processing_failed')
    await env.BUCKET.delete(key)
    throw namingReference(err)
  }
  const object = await env.BUCKET.get(key)
  if (!object) throw new ApiError('processing_failed', 'The catalog image was not stored')
  return { id, seed: input.options.seed, image: storedBody(object, CATALOG_IMAGE_HEADERS) }
}

/**
 * The inference server decodes every reference before it makes anything, and starts a message
 * about one with its field (`references.1: …`): the problem names that field too.
 */
function namingReference(err: unknown): unknown {
  if (!(err instanceof ApiError) || err.field !== undefined) return err
  const field = referenceFieldOf(err.message)
  return field ? new ApiError(err.code, err.message, { field }) : err
}

function failCatalogImage(env: Pick<Env, 'DB'>, id: string, code: string) {
  return env.DB.batch([
    ...settleStatements(env.DB, id, 'release'),
    env.DB.prepare(
      `UPDATE catalog_images SET status = 'failed', error_code = ?, completed_at = ? WHERE id = ? AND status = 'pending'`,
    ).bind(code, iso(), id),
  ])
}

/** The owning workspace's stored catalog image: 404 for anyone else, 410 once past retention. */
export async function readCatalogImage(env: Env, workspaceId: string, id: string) {
  const row = await env.DB.prepare(
    `SELECT * FROM catalog_images WHERE id = ? AND workspace_id = ? AND status = 'succeeded'`,
  )
    .bind(id, workspaceId)
    .first<CatalogImageRow>()
  if (!row?.result_key) throw new ApiError('catalog_image_not_found', `No catalog image ${id} in this workspace`)
  const stored = await serveStored(env.BUCKET, row.result_key, row, `catalog image ${id}`, CATALOG_IMAGE_HEADERS)
  return { row, stored, seed: (JSON.parse(row.options) as CatalogOptions).seed }
}

/** Calls that never ended (their Worker died mid-call): the hold goes back, the row says failed. */
export async function settleAbandonedCatalogImages(env: Pick<Env, 'DB'>, now = Date.now()): Promise<number> {
  const { results } = await env.DB.prepare(
    `SELECT id FROM catalog_images WHERE status = 'pending' AND created_at <= ? LIMIT 100`,
  )
    .bind(iso(now - ABANDONED_REQUEST_MS))
    .all<{ id: string }>()
  for (const { id } of results) await failCatalogImage(env, id, 'processor_unavailable')
  return results.length
}

/** What `GET /v1/catalog-images` shows of a made image: its options as made, never its bytes. */
export interface CatalogImageView {
  id: string
  seed: number
  width: number
  height: number
  references: number
  layout: CatalogOptions['layout']
  shadow: CatalogOptions['shadow']
  background: string
  prompt: string
  createdAt: string
  expiresAt: string | null
  expired: boolean
  links: { self: string }
}

/**
 * The workspace's made catalog images, newest first (calls that failed or are still running are
 * not images); one past its 24 hours stays listed, marked expired, as a job's metadata stays.
 */
export async function listCatalogImages(
  db: D1Database,
  workspaceId: string,
  q: { limit?: number; cursor?: string },
  now = Date.now(),
): Promise<{ catalogImages: CatalogImageView[]; nextCursor: string | null }> {
  const page = await listPage<CatalogImageRow>(
    db,
    'catalog_images',
    { where: ['workspace_id = ?', "status = 'succeeded'"], args: [workspaceId] },
    q,
  )
  return { catalogImages: page.rows.map((row) => catalogImageView(row, now)), nextCursor: page.nextCursor }
}

function catalogImageView(row: CatalogImageRow, now: number): CatalogImageView {
  const options = JSON.parse(row.options) as CatalogOptions
  return {
    id: row.id,
    seed: options.seed,
    width: options.width,
    height: options.height,
    references: row.references,
    layout: options.layout,
    shadow: options.shadow,
    background: options.background,
    prompt: options.prompt,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    expired: bytesExpired(row, now),
    links: { self: `/v1/catalog-images/${row.id}` },
  }
}
