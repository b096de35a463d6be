/**
 * @module
 * D1 tables (drizzle). `migrations/` is generated from this file by `npm run db:generate`.
 */
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`

export const workspaces = sqliteTable('workspaces', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: text('created_at').notNull().default(now),
})

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    name: text('name').notNull().default(''),
    prefix: text('prefix').notNull(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    hash: text('hash').notNull(),
    scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull(),
    expiresAt: text('expires_at'),
    revokedAt: text('revoked_at'),
    lastUsedAt: text('last_used_at'),
    createdAt: text('created_at').notNull().default(now),
  },
  (t) => [uniqueIndex('api_keys_hash').on(t.hash), index('api_keys_workspace').on(t.workspaceId)],
)

/** One row per workspace and period: `held + used <= credit_limit` always holds. */
export const creditAccounts = sqliteTable('credit_accounts', {
  workspaceId: text('workspace_id')
    .primaryKey()
    .references(() => workspaces.id),
  creditLimit: integer('credit_limit').notNull(),
  held: integer('held').notNull().default(0),
  used: integer('used').notNull().default(0),
  periodEndsAt: text('period_ends_at').notNull(),
})

/** A hold moves held → charged or held → released exactly once. */
export const creditHolds = sqliteTable('credit_holds', {
  jobId: text('job_id').primaryKey(),
  workspaceId: text('workspace_id').notNull(),
  status: text('status', { enum: ['held', 'charged', 'released'] }).notNull(),
  createdAt: text('created_at').notNull().default(now),
  settledAt: text('settled_at'),
})

export const uploads = sqliteTable(
  'uploads',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    status: text('status', { enum: ['pending', 'ready'] }).notNull(),
    objectKey: text('object_key').notNull(),
    byteSize: integer('byte_size'),
    sha256: text('sha256'),
    width: integer('width'),
    height: integer('height'),
    mimeType: text('mime_type'),
    expiresAt: text('expires_at').notNull(),
    createdAt: text('created_at').notNull().default(now),
  },
  (t) => [index('uploads_workspace').on(t.workspaceId)],
)

export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    kind: text('kind', { enum: ['remove_background', 'virtual_try_on'] }).notNull(),
    status: text('status', {
      enum: ['queued', 'processing', 'succeeded', 'failed', 'canceled'],
    }).notNull(),
    stage: text('stage', {
      enum: ['queued', 'preparing', 'segmenting', 'refining', 'rendering', 'storing', 'complete'],
    }).notNull(),
    format: text('format').notNull().default('png'),
    options: text('options', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    sourceKey: text('source_key').notNull(),
    resultKey: text('result_key'),
    resultContentType: text('result_content_type'),
    modelVersion: text('model_version'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    warnings: text('warnings', { mode: 'json' }).$type<{ code: string; message: string }[]>(),
    batchId: text('batch_id'),
    projectId: text('project_id'),
    createdAt: text('created_at').notNull(),
    startedAt: text('started_at'),
    completedAt: text('completed_at'),
    expiresAt: text('expires_at'),
    resultDeletedAt: text('result_deleted_at'),
  },
  (t) => [
    index('jobs_workspace_created').on(t.workspaceId, t.createdAt, t.id),
    index('jobs_expiry').on(t.expiresAt),
  ],
)

/** Remembers the first response to an `Idempotency-Key` for at least 24 hours. */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    workspaceId: text('workspace_id').notNull(),
    key: text('key').notNull(),
    scope: text('scope').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state', { enum: ['in_progress', 'done'] }).notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    responseLocation: text('response_location'),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.scope, t.key] })],
)

/** A batch of removal jobs created atomically (SPEC.md §4 Batches). */
export const batches = sqliteTable(
  'batches',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    status: text('status', { enum: ['processing', 'complete'] }).notNull(),
    total: integer('total').notNull(),
    options: text('options', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: text('created_at').notNull(),
    completedAt: text('completed_at'),
    /** Set once `image.batch.completed.v1` has been handed to the webhook outboxes. */
    completedEventAt: text('completed_event_at'),
  },
  (t) => [index('batches_workspace').on(t.workspaceId, t.createdAt)],
)

/** Webhook endpoints; deliveries and their history live in the endpoint's WebhookOutbox object. */
export const webhookEndpoints = sqliteTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    url: text('url').notNull(),
    /** null: every event type except progress (DESIGN.md §3). */
    events: text('events', { mode: 'json' }).$type<string[] | null>(),
    /** AES-GCM ciphertext of the signing secret, base64url `iv.ciphertext`. */
    secretCiphertext: text('secret_ciphertext').notNull(),
    createdAt: text('created_at').notNull(),
    disabledAt: text('disabled_at'),
    disabledReason: text('disabled_reason'),
  },
  (t) => [index('webhook_endpoints_workspace').on(t.workspaceId)],
)
