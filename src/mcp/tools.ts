/**
 * @module
 * The MCP tools (DESIGN.md §3 MCP), each a thin layer over the service its REST route calls, with
 * the REST route's scopes (`routes`, read from src/services/access.ts) and an input schema built
 * from the REST contract's zod schemas (src/schemas/). What MCP adds is said where it is added:
 * the bounded wait and a generated idempotency key on `remove_background`, and referenced uploads
 * completed on first use (docs/decisions.md "MCP").
 */
import { z } from '@hono/zod-openapi'
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import { MAX_REFERENCES } from '../contract/catalog'
import { CatalogOptionsSchema, withSeed } from '../contract/catalog'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { sha256Hex } from '../lib/crypto'
import { preferWaitSeconds } from '../lib/router'
import { inferenceCall } from '../middleware/trace'
import { acceptContext } from '../routes/job-route'
import { IdParams, Uuid } from '../schemas/common'
import { JobListQuery } from '../schemas/job'
import { REMOVAL_SOURCES, RemovalJsonSchema } from '../schemas/removal'
import { SourceSchema, TRY_ON_SOURCES, TryOnOptionsSchema } from '../schemas/try-on'
import { UploadRequestSchema } from '../schemas/upload'
import type { RouteKey } from '../services/access'
import { makeCatalogImageKeyed } from '../services/catalog'
import { getUsage } from '../services/credits'
import { resolveSource, sourcesFromJson } from '../services/job-sources'
import { findJob, listJobs } from '../services/job-store'
import { toJob } from '../services/job-view'
import { cancelJob } from '../services/jobs'
import { acceptRemoval } from '../services/removals'
import { acceptTryOn } from '../services/try-ons'
import { completeUpload, createUpload, findUpload } from '../services/uploads'
import { absolute, absoluteJob, imageContent, jobResult, jsonResult } from './results'

/** One tool: what `tools/list` shows of it, the REST routes whose scopes it needs, and what it does. */
export interface McpTool<S extends z.ZodObject = z.ZodObject> {
  name: string
  title: string
  description: string
  input: S
  routes: readonly RouteKey[]
  annotations: ToolAnnotations
  run: (c: Context<AppEnv>, args: z.output<S>) => Promise<CallToolResult>
}

/**
 * A tool, its arguments strict as the REST contract's bodies are: an argument it does not take is
 * refused (`Unknown field foo`), not ignored, and `tools/list` shows `additionalProperties: false`.
 * Strict here, once, since some inputs are REST schemas of paths and queries, which are not strict.
 */
const tool = <S extends z.ZodObject>(t: McpTool<S>): McpTool =>
  ({ ...t, input: t.input.strict() }) as unknown as McpTool

/**
 * The longest `Prefer: wait` REST honours (8 s): `remove_background` always waits that long, since
 * a tool call has no header to ask for it and an assistant would rather have the result at once.
 */
const BOUNDED_WAIT_SECONDS = preferWaitSeconds('wait=3600') as number

const IdempotencyKey = z
  .string()
  .min(1)
  .max(128)
  .describe('Send the same key again (with the same input) to get the first answer instead of doing it twice')

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin
const workspace = (c: Context<AppEnv>) => c.get('auth').workspaceId

/**
 * An upload a tool names, ready: one still pending is completed first (the bytes verified as
 * `POST /v1/uploads/{id}/complete` does), so an assistant needs no step between PUT and use.
 */
async function completedUpload(c: Context<AppEnv>, id: string, field: string): Promise<void> {
  const row = await findUpload(c.env.DB, workspace(c), id, field)
  if (row.status !== 'pending') return
  try {
    await completeUpload(c.env, workspace(c), id, inferenceCall(c))
  } catch (err) {
    if (!(err instanceof ApiError) || err.field) throw err
    throw new ApiError(err.code, err.message, { field, retryable: err.retryable, retryAfter: err.retryAfter })
  }
}

const removeBackground = tool({
  name: 'remove_background',
  title: 'Remove the background of an image',
  description: `Removes the background of one image, given as sourceUrl (a public http(s) image URL) or uploadId (from create_upload, after its bytes were PUT). Waits up to ${BOUNDED_WAIT_SECONDS} s for the job: a finished job comes back with its PNG (as image content when ≤ 1 MB) and a signed result URL; an unfinished one with its id for get_job. Costs one credit.`,
  // REST's JSON body as it is (its options with their defaults), plus the key REST takes as a header.
  input: RemovalJsonSchema.extend({ idempotencyKey: IdempotencyKey.optional() }),
  routes: ['POST /v1/removals', 'POST /v1/uploads/{id}/complete'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(c, args) {
    const { source } = sourcesFromJson(args, REMOVAL_SOURCES)
    if (source.kind === 'upload') await completedUpload(c, source.uploadId, 'uploadId')
    // REST requires the key; a tool call that sends none gets a fresh one: each call is one job.
    const key = args.idempotencyKey ?? crypto.randomUUID()
    const accepted = await acceptRemoval(acceptContext(c, key, BOUNDED_WAIT_SECONDS), async () => ({
      source,
      options: args.options,
    }))
    return presentJob(c, accepted.job.id)
  },
})

const tryOn = tool({
  name: 'try_on',
  title: 'Put a garment on a person (experimental)',
  description: `Experimental, for evaluation under a non-commercial licence: dresses the person in one photo in the garment of another, each given as {sourceUrl} or {uploadId} (from create_upload). Waits up to ${BOUNDED_WAIT_SECONDS} s: a finished job comes back with its PNG and notices (warnings); an unfinished one with its id for get_job. Costs one credit.`,
  input: z.strictObject({
    person: SourceSchema.describe('The person photo: {sourceUrl} or {uploadId}'),
    garment: SourceSchema.describe('The garment photo (flat lay or product shot): {sourceUrl} or {uploadId}'),
    options: TryOnOptionsSchema.describe(
      'category: upper_body | lower_body | dress; seed (optional): the same seed, the same result',
    ),
    idempotencyKey: IdempotencyKey.optional(),
  }),
  routes: ['POST /v1/virtual-try-ons', 'POST /v1/uploads/{id}/complete'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(c, args) {
    const sources = sourcesFromJson(args, TRY_ON_SOURCES)
    for (const slot of ['person', 'garment'] as const) {
      const source = sources[slot]
      if (source.kind === 'upload') await completedUpload(c, source.uploadId, `${slot}.uploadId`)
    }
    // As remove_background: a call without a key is one job.
    const key = args.idempotencyKey ?? crypto.randomUUID()
    const accepted = await acceptTryOn(acceptContext(c, key, BOUNDED_WAIT_SECONDS), async () => ({
      ...sources,
      options: args.options,
    }))
    return presentJob(c, accepted.job.id)
  },
})

/**
 * A job as it now stands, with a freshly signed result URL: also after a replayed key, whose
 * stored first answer (REST's replay) may hold an unfinished status or an expired signature.
 */
async function presentJob(c: Context<AppEnv>, id: string): Promise<CallToolResult> {
  const job = await toJob(await findJob(c.env.DB, workspace(c), id), c.env.RESULT_SIGNING_KEY)
  return jobResult(c.env, workspace(c), job, origin(c))
}

const getJob = tool({
  name: 'get_job',
  title: 'Get a job',
  description:
    'Reads a job: its status and stage, and once succeeded its result (the PNG as image content when ≤ 1 MB, and a signed URL valid 10 minutes; call again for a fresh one). Results are kept 24 hours.',
  input: IdParams,
  routes: ['GET /v1/jobs/{id}', 'GET /v1/jobs/{id}/result'],
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(c, { id }) {
    return presentJob(c, id)
  },
})

const cancel = tool({
  name: 'cancel_job',
  title: 'Cancel a job',
  description: 'Cancels a queued or processing job (its held credit is released); a finished job is answered as it is.',
  input: IdParams,
  routes: ['DELETE /v1/jobs/{id}'],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(c, { id }) {
    const job = await cancelJob(c.env, workspace(c), id)
    return jobResult(c.env, workspace(c), job, origin(c))
  },
})

const list = tool({
  name: 'list_jobs',
  title: 'List jobs',
  description:
    "Lists the workspace's jobs, newest first, 20 at a time (limit up to 100); pass nextCursor as cursor for the next page.",
  input: JobListQuery,
  routes: ['GET /v1/jobs'],
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(c, query) {
    const page = await listJobs(c.env.DB, workspace(c), query)
    const jobs = await Promise.all(page.rows.map((row) => toJob(row, c.env.RESULT_SIGNING_KEY)))
    return jsonResult({ jobs: jobs.map((job) => absoluteJob(job, origin(c))), nextCursor: page.nextCursor })
  },
})

const upload = tool({
  name: 'create_upload',
  title: 'Reserve an upload',
  description:
    'Reserves an upload for an image too large or too private for a URL. PUT the bytes to uploadUrl (with uploadHeaders exactly when given; otherwise with the same Authorization: Bearer credential as this server and the image Content-Type), then pass the id as uploadId or in references. Expires in an hour.',
  input: UploadRequestSchema,
  routes: ['POST /v1/uploads', 'PUT /v1/uploads/{id}/content'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(c, body) {
    const created = await createUpload(c.env, workspace(c), body.contentType)
    const shown = { ...created, uploadUrl: absolute(origin(c), created.uploadUrl) }
    const how = created.uploadHeaders
      ? `PUT the image bytes to ${shown.uploadUrl} with exactly these headers: ${JSON.stringify(created.uploadHeaders)}`
      : `PUT the image bytes to ${shown.uploadUrl} with Authorization: Bearer <your credential> and the image's Content-Type`
    return jsonResult(
      shown,
      `${how}; then use ${created.id} as uploadId (remove_background) or in references (create_catalog_image).`,
    )
  },
})

const catalogImage = tool({
  name: 'create_catalog_image',
  title: 'Make a catalog product photo',
  description:
    'Makes a marketplace-ready product photo (PNG, kept 24 hours) from one to four uploads of the same product (front, back, side, detail), while you wait. Returns the PNG as image content when ≤ 1 MB and its seed (send it again to make the same image). Costs one credit.',
  input: CatalogOptionsSchema.partial({ seed: true }).extend({
    references: z
      .array(Uuid)
      .min(1)
      .max(MAX_REFERENCES)
      .describe('Upload ids (create_upload), in the order front, back, side, detail'),
    idempotencyKey: IdempotencyKey.optional(),
  }),
  routes: ['POST /v1/catalog-images', 'POST /v1/uploads/{id}/complete'],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(c, args) {
    const { references: ids, idempotencyKey, ...given } = args
    const references = []
    for (const [i, id] of ids.entries()) {
      const field = `references.${i}`
      await completedUpload(c, id, field)
      const fields = { uploadId: field, sourceUrl: field, file: field }
      references.push(await resolveSource(c.env, workspace(c), '', { kind: 'upload', uploadId: id }, fields))
    }
    const options = withSeed(given)
    // The request as sent (no random seed), so a retry with the same key replays.
    const fingerprint = () => sha256Hex(JSON.stringify({ references: ids, ...given }))
    const once = idempotencyKey ? { key: idempotencyKey, fingerprint } : undefined
    const made = await makeCatalogImageKeyed(c.env, c.get('auth'), { references, options }, once, inferenceCall(c))
    const self = absolute(origin(c), `/v1/catalog-images/${made.id}`)
    const { width, height, layout, shadow, background } = options
    const view = { id: made.id, seed: made.seed, width, height, layout, shadow, background, links: { self } }
    const answer = jsonResult(view, `Catalog image ${made.id} (seed ${made.seed}); its PNG is kept 24 hours at ${self}`)
    const image = await imageContent(made.image.body, made.image.size)
    if (image) answer.content.push(image)
    return answer
  },
})

const usage = tool({
  name: 'get_usage',
  title: 'Get credits',
  description: "The workspace's credits: limit, available, held (by running jobs), used, and when the period ends.",
  input: z.strictObject({}),
  routes: ['GET /v1/usage'],
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(c) {
    return jsonResult({ ...(await getUsage(c.env.DB, workspace(c))) })
  },
})

export const MCP_TOOLS: readonly McpTool[] = [
  removeBackground,
  tryOn,
  getJob,
  cancel,
  list,
  upload,
  catalogImage,
  usage,
]
