/**
 * @module
 * `Idempotency-Key` (SPEC.md §4): the first request with a key claims it; a finished one is
 * replayed to later requests with the same input; different input is 409 `idempotency_conflict`.
 * Only successful responses are remembered: a failed request frees its key so the client can
 * retry with the same key once it has fixed the cause. A claim whose Worker died before it could
 * finish or free it is taken over by the same request once it is older than any request runs
 * (`ABANDONED_REQUEST_MS`), instead of refusing that key for its whole day.
 */
import { ApiError } from '../errors'
import { sha256Hex } from '../lib/crypto'
import { DAY_MS, iso } from '../lib/time'
import { ABANDONED_REQUEST_MS } from './deadlines'
import type { idempotencyKeys } from '../db/schema'
import type { D1Row } from '../db/rows'

export const IDEMPOTENCY_TTL_MS = DAY_MS

/** How every Idempotency-Key problem names the header in `field` (errors.ts `headerName` agrees). */
export const IDEMPOTENCY_FIELD = 'Idempotency-Key'

export interface StoredResponse {
  status: number
  body: string
  location?: string | null
}

export type Claim =
  | { kind: 'claimed'; release: () => Promise<void>; complete: (r: StoredResponse) => Promise<void> }
  | { kind: 'replay'; response: StoredResponse }

type Row = Pick<
  D1Row<typeof idempotencyKeys>,
  'request_hash' | 'state' | 'response_status' | 'response_body' | 'response_location' | 'expires_at'
>

export function requireIdempotencyKey(key: string | undefined): string {
  if (!key) {
    throw new ApiError('invalid_input', 'Expected an Idempotency-Key header of 1 to 128 characters', {
      field: IDEMPOTENCY_FIELD,
    })
  }
  return key
}

/**
 * Claims a key whose request, with this same input, started long enough ago that its Worker must
 * have died mid-request; one of several such retries wins (the row's `created_at` moves).
 */
async function takeOverAbandoned(
  db: D1Database,
  where: readonly [string, string, string],
  requestHash: string,
  now: number,
): Promise<boolean> {
  const taken = await db
    .prepare(
      `UPDATE idempotency_keys SET created_at = ?, expires_at = ?
       WHERE workspace_id = ? AND scope = ? AND key = ? AND state = 'in_progress' AND request_hash = ? AND created_at < ?`,
    )
    .bind(iso(now), iso(now + IDEMPOTENCY_TTL_MS), ...where, requestHash, iso(now - ABANDONED_REQUEST_MS))
    .run()
  return taken.meta.changes === 1
}

export async function claimIdempotencyKey(
  db: D1Database,
  workspaceId: string,
  scope: string,
  key: string,
  requestHash: string,
): Promise<Claim> {
  const now = Date.now()
  // An expired record no longer protects anything; drop it so the key can be claimed afresh.
  await db
    .prepare('DELETE FROM idempotency_keys WHERE workspace_id = ? AND scope = ? AND key = ? AND expires_at < ?')
    .bind(workspaceId, scope, key, iso(now))
    .run()
  const inserted = await db
    .prepare(
      `INSERT INTO idempotency_keys (workspace_id, scope, key, request_hash, state, created_at, expires_at)
       VALUES (?, ?, ?, ?, 'in_progress', ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(workspaceId, scope, key, requestHash, iso(now), iso(now + IDEMPOTENCY_TTL_MS))
    .run()
  const where = [workspaceId, scope, key] as const
  if (inserted.meta.changes === 1 || (await takeOverAbandoned(db, where, requestHash, now))) {
    return {
      kind: 'claimed',
      release: async () => {
        await db
          .prepare(
            "DELETE FROM idempotency_keys WHERE workspace_id = ? AND scope = ? AND key = ? AND state = 'in_progress'",
          )
          .bind(...where)
          .run()
      },
      complete: async (r) => {
        await db
          .prepare(
            `UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ?, response_location = ?
             WHERE workspace_id = ? AND scope = ? AND key = ?`,
          )
          .bind(r.status, r.body, r.location ?? null, ...where)
          .run()
      },
    }
  }
  const row = await db
    .prepare(
      'SELECT request_hash, state, response_status, response_body, response_location, expires_at FROM idempotency_keys WHERE workspace_id = ? AND scope = ? AND key = ?',
    )
    .bind(...where)
    .first<Row>()
  if (!row) {
    throw new ApiError('idempotency_conflict', 'The Idempotency-Key is being reused concurrently', {
      field: IDEMPOTENCY_FIELD,
      retryable: true,
      retryAfter: 1,
    })
  }
  if (row.request_hash !== requestHash) {
    throw new ApiError('idempotency_conflict', 'The Idempotency-Key was already used with a different request', {
      field: IDEMPOTENCY_FIELD,
    })
  }
  if (row.state !== 'done') {
    throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress', {
      field: IDEMPOTENCY_FIELD,
      retryable: true,
      retryAfter: 1,
    })
  }
  return {
    kind: 'replay',
    response: { status: row.response_status ?? 200, body: row.response_body ?? '', location: row.response_location },
  }
}

/**
 * Runs `run` once per key and input: a replay returns the first response, a failure frees the key.
 * @example return idempotent(env.DB, workspaceId, 'removals', key, hash, () => createJob(…))
 */
export async function idempotent(
  db: D1Database,
  workspaceId: string,
  scope: string,
  key: string,
  requestHash: string,
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse> {
  const claim = await claimIdempotencyKey(db, workspaceId, scope, key, requestHash)
  if (claim.kind === 'replay') return claim.response
  try {
    const response = await run()
    await claim.complete(response)
    return response
  } catch (err) {
    await claim.release()
    throw err
  }
}

/** What {@link createOnce} needs to make a resource once per `Idempotency-Key` and input. */
export interface CreateOnceOptions<Created, Replayed> {
  db: D1Database
  workspaceId: string
  /** The route's own namespace of keys (`projects`, `project-revisions`, `api-keys`, …). */
  scope: string
  /** The optional header: without it every request creates, as before. */
  key: string | undefined
  /** What makes two requests the same: the validated body plus the path ids outside `scope`. */
  request: unknown
  create: () => Promise<Created>
  idOf: (created: Created) => string
  /** The resource again by its id: what a replay answers with. */
  find: (id: string) => Promise<Replayed>
}

/**
 * Creates a resource at most once per `Idempotency-Key` and input, with the rules of
 * {@link idempotent} (a replay for the same input, 409 for other input or while the first is
 * running, a failure frees the key). Only the new resource's id is remembered, never its body, so
 * no secret (an API key's value, a webhook's signing secret) is ever stored by this table; a
 * replay reads the resource afresh with `find` and the route answers as for the first request.
 * @example const row = await createOnce({ db, workspaceId, scope: 'projects', key, request: body,
 *   create: () => createProject(env, workspaceId, body), idOf: (p) => p.id,
 *   find: (id) => findProject(db, workspaceId, id) })
 */
export async function createOnce<Created, Replayed>(
  opts: CreateOnceOptions<Created, Replayed>,
): Promise<Created | Replayed> {
  const { db, workspaceId, scope, key, request, create, idOf, find } = opts
  if (key === undefined) return create()
  let created: { value: Created } | undefined
  const stored = await idempotent(db, workspaceId, scope, key, await sha256Hex(canonicalJson(request)), async () => {
    created = { value: await create() }
    // The status is the record's, not the answer's: each route answers a replay as it answered first.
    return { status: 201, body: JSON.stringify({ id: idOf(created.value) }) }
  })
  if (created) return created.value
  return find((JSON.parse(stored.body) as { id: string }).id)
}

/** JSON with every object's keys sorted: `{a, b}` and `{b, a}` are one request. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )
}
