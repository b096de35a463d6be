/**
 * @module
 * D1 tables (drizzle). `migrations/` is generated from this file by `npm run db:generate`.
 */
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { JOB_KIND_NAMES, JOB_STAGES, JOB_STATUSES } from '../contract/stages'
import { DISABLED_REASONS } from '../schemas/webhook'

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`

export const workspaces = sqliteTable('workspaces', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Requests per minute for this workspace; null means the deployment default. */
  rateLimitPerMinute: integer('rate_limit_per_minute'),
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
    /** Public kinds, and the internal `refinement` and `export` of projects (DESIGN.md §3 Job kinds). */
    kind: text('kind', { enum: JOB_KIND_NAMES }).notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull(),
    stage: text('stage', { enum: JOB_STAGES }).notNull(),
    format: text('format').notNull().default('png'),
    options: text('options', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    sourceKey: text('source_key').notNull(),
    resultKey: text('result_key'),
    resultContentType: text('result_content_type'),
    /** A removal's mask confidence, 0..1, from the inference server's `done` frame (issue 31). */
    resultConfidence: real('result_confidence'),
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
    /** When the retention sweep deleted the job's own source bytes (`sources/<id>…`). */
    sourceDeletedAt: text('source_deleted_at'),
  },
  (t) => [index('jobs_workspace_created').on(t.workspaceId, t.createdAt, t.id), index('jobs_expiry').on(t.expiresAt)],
)

/**
 * Every source a job reads (a removal's one, a try-on's person and garment), written in the same
 * D1 batch as the job: the retention sweep asks it whether any job still needs an upload's bytes.
 * `jobs.source_key` is the main one (a project copies it; a job's own `sources/<id>` go with it).
 */
export const jobSources = sqliteTable(
  'job_sources',
  {
    jobId: text('job_id')
      .notNull()
      // A project's jobs are deleted with it; their rows go with them.
      .references(() => jobs.id, { onDelete: 'cascade' }),
    sourceKey: text('source_key').notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.sourceKey] }), index('job_sources_source_key').on(t.sourceKey)],
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
    disabledReason: text('disabled_reason', { enum: DISABLED_REASONS }),
  },
  (t) => [index('webhook_endpoints_workspace').on(t.workspaceId)],
)

/** People who sign in by email (issue 5). `email` is trimmed and lower-cased. */
export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    createdAt: text('created_at').notNull().default(now),
  },
  (t) => [uniqueIndex('users_email').on(t.email)],
)

/** Which users belong to which workspaces; a session acts for one membership. */
export const workspaceMembers = sqliteTable(
  'workspace_members',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    role: text('role', { enum: ['owner', 'member'] }).notNull(),
    createdAt: text('created_at').notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index('workspace_members_user').on(t.userId)],
)

/**
 * The one live sign-in code per email: a new start replaces it. `code_hash` is an HMAC of the
 * code (never the code); `attempts` counts verify calls, and the fifth failure ends it.
 */
export const emailChallenges = sqliteTable('email_challenges', {
  email: text('email').primaryKey(),
  codeHash: text('code_hash').notNull(),
  attempts: integer('attempts').notNull().default(0),
  expiresAt: text('expires_at').notNull(),
  /** Codes sent in the current window (start is limited per email). */
  sentCount: integer('sent_count').notNull().default(1),
  windowStartedAt: text('window_started_at').notNull(),
  createdAt: text('created_at').notNull(),
})

/** A signed-in session: one refresh-token family. Revoking it ends every token of the family. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    workspaceId: text('workspace_id').notNull(),
    /** `email` or `device` (and the device client's name). */
    method: text('method', { enum: ['email', 'device'] }).notNull(),
    client: text('client'),
    createdAt: text('created_at').notNull(),
    revokedAt: text('revoked_at'),
    revokedReason: text('revoked_reason', { enum: ['logout', 'reuse'] }),
  },
  (t) => [index('sessions_user').on(t.userId)],
)

/** Opaque refresh tokens, stored as SHA-256; each is used once, then replaced in its family. */
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: text('id').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id),
    hash: text('hash').notNull(),
    expiresAt: text('expires_at').notNull(),
    createdAt: text('created_at').notNull(),
    /** Set when the token was exchanged for the next one; presenting it again is reuse. */
    usedAt: text('used_at'),
  },
  (t) => [uniqueIndex('refresh_tokens_hash').on(t.hash), index('refresh_tokens_session').on(t.sessionId)],
)

/** RFC 8628 device authorizations. The device code is stored as SHA-256; the user code in clear. */
export const deviceAuthorizations = sqliteTable(
  'device_authorizations',
  {
    id: text('id').primaryKey(),
    deviceCodeHash: text('device_code_hash').notNull(),
    /** `BCDFGHJK` form without the hyphen. */
    userCode: text('user_code').notNull(),
    client: text('client').notNull(),
    status: text('status', { enum: ['pending', 'approved', 'exchanged'] }).notNull(),
    /** Seconds a client must wait between polls; grows by 5 on every slow_down. */
    interval: integer('interval').notNull(),
    lastPolledAt: text('last_polled_at'),
    userId: text('user_id'),
    workspaceId: text('workspace_id'),
    expiresAt: text('expires_at').notNull(),
    createdAt: text('created_at').notNull(),
    approvedAt: text('approved_at'),
    exchangedAt: text('exchanged_at'),
  },
  (t) => [
    uniqueIndex('device_authorizations_device_code').on(t.deviceCodeHash),
    uniqueIndex('device_authorizations_user_code').on(t.userCode),
  ],
)

/** Local mode and tests only: emails the DevOutboxSender "sent", read at GET /v1/dev/outbox. */
export const devOutbox = sqliteTable(
  'dev_outbox',
  {
    id: text('id').primaryKey(),
    to: text('to_address').notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('dev_outbox_to').on(t.to, t.createdAt)],
)

/**
 * An editing project made from a succeeded removal (DESIGN.md §3 Projects). Its source is a copy
 * under `projects/<id>/`, kept (with every revision's mask) until the project is deleted.
 */
export const projects = sqliteTable(
  'projects',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    name: text('name').notNull(),
    sourceJobId: text('source_job_id').notNull(),
    sourceKey: text('source_key').notNull(),
    sourceSize: integer('source_size').notNull(),
    /** base64url SHA-256 of the source bytes (inference calls are signed over it). */
    sourceSha256: text('source_sha256').notNull(),
    width: integer('width').notNull(),
    height: integer('height').notNull(),
    /** Refinements accepted so far; the cap is 20 (SPEC.md §8). */
    refinementsUsed: integer('refinements_used').notNull().default(0),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('projects_workspace_created').on(t.workspaceId, t.createdAt, t.id)],
)

/** Immutable revisions of a project's mask; `number` 1 is the removal's mask, the newest is current. */
export const revisions = sqliteTable(
  'revisions',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id').notNull(),
    number: integer('number').notNull(),
    baseRevisionId: text('base_revision_id'),
    /** The earlier revision whose mask (and recipe) the edit started from instead of the base's (undo, then edit). */
    restoreRevisionId: text('restore_revision_id'),
    strokes: text('strokes', { mode: 'json' }).$type<unknown[]>().notNull(),
    recipe: text('recipe', { mode: 'json' }).$type<Record<string, unknown> | null>(),
    /** The refinement job that made this revision, if one did. */
    refinementId: text('refinement_id'),
    maskKey: text('mask_key').notNull(),
    maskSize: integer('mask_size').notNull(),
    maskSha256: text('mask_sha256').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('revisions_project_number').on(t.projectId, t.number),
    uniqueIndex('revisions_refinement').on(t.refinementId),
  ],
)

/**
 * Catalog images (SPEC.md §4): made synchronously, one credit held under the image's id and
 * settled when the call ends. A `pending` row older than the call's deadline is a call whose
 * Worker died: the sweep releases its hold and marks it failed.
 */
export const catalogImages = sqliteTable(
  'catalog_images',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull(),
    /** The options as made (prompt, size, seed, background, shadow, layout, steps). */
    options: text('options', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    references: integer('references').notNull(),
    resultKey: text('result_key'),
    modelVersion: text('model_version'),
    warnings: text('warnings', { mode: 'json' }).$type<{ code: string; message: string }[]>(),
    errorCode: text('error_code'),
    createdAt: text('created_at').notNull(),
    completedAt: text('completed_at'),
    expiresAt: text('expires_at'),
    resultDeletedAt: text('result_deleted_at'),
  },
  (t) => [
    index('catalog_images_workspace').on(t.workspaceId, t.createdAt),
    index('catalog_images_expiry').on(t.expiresAt),
  ],
)
