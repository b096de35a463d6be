/**
 * @module
 * Webhook endpoints (SPEC.md §4 Webhooks) and the pieces a delivery is made of: the signing
 * secret (`whsec_` + 32 random bytes base64url, DESIGN.md §3), its AES-GCM encryption at rest with
 * `DATA_ENCRYPTION_KEY`, the signature `hex(HMAC-SHA256(secret, "{timestamp}.{deliveryId}.{rawBody}"))`
 * (SPEC.md §6) and the retry schedule. Deliveries themselves live in the endpoint's WebhookOutbox.
 */
import type { EventType } from '../lib/events'
import type { Env } from '../env'
import { ApiError } from '../errors'
import { hmacHex, randomToken, toBase64Url } from '../lib/crypto'
import { HOUR_MS, iso } from '../lib/time'
import { WEBHOOK_EVENT_TYPES, type DisabledReason, type WebhookCreate, type WebhookEndpoint } from '../schemas/webhook'
import { allowlistFromEnv, checkUrl, DohResolver, isAllowlisted, UnsafeUrlError } from './ssrf'
import type { webhookEndpoints } from '../db/schema'
import type { D1Row } from '../db/rows'

export const SECRET_PREFIX = 'whsec_'
/** Enabled endpoints a workspace may have: every event fans out to each of them. */
export const MAX_ENDPOINTS_PER_WORKSPACE = 20
/** Delays after the 1st, 2nd, … failed attempt (DESIGN.md §3: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h). */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * HOUR_MS, 5 * HOUR_MS, 10 * HOUR_MS] as const
/** Retries stop this long after the first attempt; one last attempt is made at that moment. */
export const RETRY_WINDOW_MS = 24 * HOUR_MS
/** Per attempt (DESIGN.md §3). */
export const DELIVERY_TIMEOUT_MS = 15_000

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** `events` is a JSON array, or null for every type but progress. */
export type WebhookEndpointRow = D1Row<typeof webhookEndpoints>

// ---------------------------------------------------------------- secrets and signatures

/** A new signing secret: `whsec_` + 32 random bytes base64url. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomToken(32)
}

function fromBase64Url(text: string): Uint8Array {
  const b64 = text.replaceAll('-', '+').replaceAll('_', '/')
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
  return Uint8Array.from(bin, (c) => c.charCodeAt(0))
}

async function dataKey(encodedKey: string | undefined): Promise<CryptoKey> {
  let raw: Uint8Array | undefined
  try {
    raw = encodedKey ? fromBase64Url(encodedKey) : undefined
  } catch {
    raw = undefined
  }
  if (raw?.byteLength !== 32) {
    throw new Error('DATA_ENCRYPTION_KEY must be set to the base64url encoding of 32 random bytes')
  }
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt'])
}

/**
 * Encrypts a secret with AES-256-GCM; the result is `base64url(iv).base64url(ciphertext+tag)`.
 * `context` (the endpoint id) is authenticated too, so a ciphertext copied to another row fails.
 */
export async function encryptSecret(encodedKey: string, plaintext: string, context: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: encoder.encode(context) },
    await dataKey(encodedKey),
    encoder.encode(plaintext),
  )
  return `${toBase64Url(iv)}.${toBase64Url(sealed)}`
}

/** Reverses {@link encryptSecret}; throws if the key, the context or the ciphertext is wrong. */
export async function decryptSecret(encodedKey: string, ciphertext: string, context: string): Promise<string> {
  const [iv, sealed] = ciphertext.split('.')
  if (!iv || !sealed) throw new Error('Malformed secret ciphertext')
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: fromBase64Url(iv), additionalData: encoder.encode(context) },
    await dataKey(encodedKey),
    fromBase64Url(sealed),
  )
  return decoder.decode(plain)
}

/**
 * The `webhook-signature` header: hex HMAC-SHA256 keyed with the whole secret string (UTF-8,
 * `whsec_` prefix included) over `{timestamp}.{deliveryId}.{rawBody}`.
 * @example await signDelivery('whsec_…', 1767225600, deliveryId, body)
 */
export function signDelivery(secret: string, timestamp: number, deliveryId: string, rawBody: string): Promise<string> {
  return hmacHex(secret, `${timestamp}.${deliveryId}.${rawBody}`)
}

// ---------------------------------------------------------------- retry schedule

/**
 * When the next attempt is due after a failed one, or null when retrying is over.
 * @param cycleAttempts attempts made so far in this cycle (a replay starts a new cycle), ≥ 1
 * @param firstAttemptAt when the cycle's first attempt was made (ms)
 * @param lastAttemptAt when the failed attempt was made (ms)
 * @param retryAfterMs the receiver's `Retry-After`, honoured when later than the schedule
 */
export function nextAttemptAt(
  cycleAttempts: number,
  firstAttemptAt: number,
  lastAttemptAt: number,
  retryAfterMs?: number,
): number | null {
  const deadline = firstAttemptAt + RETRY_WINDOW_MS
  if (lastAttemptAt >= deadline) return null
  const delay = RETRY_DELAYS_MS[Math.min(Math.max(cycleAttempts, 1), RETRY_DELAYS_MS.length) - 1]
  const next = Math.max(lastAttemptAt + delay, retryAfterMs === undefined ? 0 : lastAttemptAt + retryAfterMs)
  // The schedule's sum (17 h 35 min) falls short of 24 h; the last attempt is made at the deadline.
  return Math.min(next, deadline)
}

/** `Retry-After` (delta-seconds or an HTTP date) in milliseconds from `now`; undefined if absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

// ---------------------------------------------------------------- endpoints

/** Whether an endpoint with this `events` column receives `type`. */
export function subscribes(events: string[] | null, type: EventType): boolean {
  return events === null ? (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type) : events.includes(type)
}

export function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  const events = row.events === null ? null : (JSON.parse(row.events) as string[])
  return {
    id: row.id,
    url: row.url,
    events: events ?? [...WEBHOOK_EVENT_TYPES],
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
  }
}

/**
 * The rules for a webhook URL: the SSRF guard of `sourceUrl` (422 `unsafe_url`), then HTTPS for
 * anything but the test/dev allow-list (plain http to 127.0.0.1 in local mode; never in production).
 */
export async function assertWebhookUrl(env: Env, raw: string): Promise<URL> {
  const allowlist = allowlistFromEnv(env)
  let url: URL
  try {
    url = await checkUrl(raw, { resolver: new DohResolver({ url: env.DNS_RESOLVER_URL }), allowlist })
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new ApiError('unsafe_url', `The webhook URL is not allowed: ${err.reason}`, { field: 'url' })
    }
    throw err
  }
  if (url.protocol !== 'https:' && !isAllowlisted(url, allowlist)) {
    throw new ApiError(
      'invalid_input',
      `Expected an https URL for a public webhook endpoint but received ${url.protocol}`,
      {
        field: 'url',
      },
    )
  }
  if (url.hash) throw new ApiError('invalid_input', 'Expected a webhook URL without a #fragment', { field: 'url' })
  return url
}

/** Registers an endpoint; the only time its secret leaves the service. */
export async function createEndpoint(
  env: Env,
  workspaceId: string,
  input: WebhookCreate,
): Promise<WebhookEndpoint & { secret: string }> {
  const url = await assertWebhookUrl(env, input.url)
  const enabled = await env.DB.prepare(
    'SELECT COUNT(*) AS n FROM webhook_endpoints WHERE workspace_id = ? AND disabled_at IS NULL',
  )
    .bind(workspaceId)
    .first<{ n: number }>()
  if ((enabled?.n ?? 0) >= MAX_ENDPOINTS_PER_WORKSPACE) {
    throw new ApiError(
      'invalid_input',
      `Expected at most ${MAX_ENDPOINTS_PER_WORKSPACE} enabled webhook endpoints per workspace; delete one first`,
    )
  }
  const id = crypto.randomUUID()
  const secret = generateWebhookSecret()
  const row: WebhookEndpointRow = {
    id,
    workspace_id: workspaceId,
    url: url.toString(),
    events: input.events ? JSON.stringify([...new Set(input.events)]) : null,
    secret_ciphertext: await encryptSecret(env.DATA_ENCRYPTION_KEY, secret, id),
    created_at: iso(),
    disabled_at: null,
    disabled_reason: null,
  }
  await env.DB.prepare(
    `INSERT INTO webhook_endpoints (id, workspace_id, url, events, secret_ciphertext, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  )
    .bind(row.id, row.workspace_id, row.url, row.events, row.secret_ciphertext, row.created_at)
    .run()
  return { ...toEndpoint(row), secret }
}

/** Endpoints not deleted: enabled ones, and ones the receiver disabled with 410 (marked). */
export async function listEndpoints(db: D1Database, workspaceId: string): Promise<WebhookEndpoint[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM webhook_endpoints WHERE workspace_id = ? AND disabled_reason IS NOT 'deleted'
       ORDER BY created_at DESC, id`,
    )
    .bind(workspaceId)
    .all<WebhookEndpointRow>()
  return results.map(toEndpoint)
}

/** An endpoint of the workspace, deleted or not (its delivery history stays readable). */
export async function findEndpoint(db: D1Database, workspaceId: string, id: string): Promise<WebhookEndpointRow> {
  const row = await db
    .prepare('SELECT * FROM webhook_endpoints WHERE id = ? AND workspace_id = ?')
    .bind(id, workspaceId)
    .first<WebhookEndpointRow>()
  if (!row) throw new ApiError('webhook_endpoint_not_found', `No webhook endpoint ${id} in this workspace`)
  return row
}

/** Enabled endpoints of a workspace that receive `type`. */
export async function subscribedEndpointIds(db: D1Database, workspaceId: string, type: EventType): Promise<string[]> {
  const { results } = await db
    .prepare('SELECT id, events FROM webhook_endpoints WHERE workspace_id = ? AND disabled_at IS NULL')
    .bind(workspaceId)
    .all<{ id: string; events: string | null }>()
  return results
    .filter((r) => subscribes(r.events === null ? null : (JSON.parse(r.events) as string[]), type))
    .map((r) => r.id)
}

/**
 * Stops delivery to an endpoint. `deleted` (DELETE) overrides `gone` (a 410 from the receiver),
 * keeping the first `disabled_at`; deleting twice changes nothing.
 */
export async function disableEndpoint(db: D1Database, id: string, reason: DisabledReason): Promise<void> {
  await db
    .prepare(
      `UPDATE webhook_endpoints SET disabled_at = COALESCE(disabled_at, ?), disabled_reason = ?
       WHERE id = ? AND (disabled_at IS NULL OR (? = 'deleted' AND disabled_reason IS NOT 'deleted'))`,
    )
    .bind(iso(), reason, id, reason)
    .run()
}

export function outboxFor(env: Env, endpointId: string) {
  return env.WEBHOOK_OUTBOX.get(env.WEBHOOK_OUTBOX.idFromName(endpointId))
}
