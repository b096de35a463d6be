/**
 * @module
 * Job-creating routes as data (SPEC.md §4 Processing): `jobRoute` serves and documents one from a
 * declaration (routes/removals.ts, routes/try-ons.ts). What they share: the headers read
 * (`Idempotency-Key`, `Prefer: wait`), the body's media type, and the answer — 200 with the job
 * when it ended within the wait, else 202 with `Location`. The project routes and batches use
 * `acceptContext` and `acceptedHeaders` on their own.
 */
import { createRoute, type z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { ApiError, problemContent } from '../errors'
import { parseJsonField } from '../lib/form'
import { isFormBody } from '../lib/multipart-stream'
import { createRouter, preferWaitSeconds } from '../lib/router'
import { authorize } from '../middleware/auth'
import { IdempotencyHeaders, json } from '../schemas/common'
import { type Job, JobSchema } from '../schemas/job'
import { documentRoute, jsonParts, partsOf, streamedMultipart } from '../schemas/multipart'
import type { AcceptContext, Accepted, StagedRead } from '../services/accept'
import type { RouteKey } from '../services/access'
import { requireIdempotencyKey } from '../services/idempotency'
import { type SourceSlots, sourcesFromForm, sourcesFromJson } from '../services/job-sources'
import type { SlotInput } from '../services/slot-jobs'

/** The paths of the routes `ROUTE_ACCESS` lists for POST. */
type PostPath = RouteKey extends infer K ? (K extends `POST ${infer P}` ? P : never) : never

/** How the 413, 415 and 422 of a job-creating route read for its images. */
interface ImageProblems {
  tooLarge: string
  unsupported: string
  unsafeUrl: string
}

/**
 * A job-creating route (SPEC.md §4 Processing), as its row in SPEC.md reads: `Idempotency-Key`
 * (required) and `Prefer: wait`; a JSON body or a multipart one with the same images and options;
 * 200 with the job when it ended within the wait, else 202 with `Location`.
 */
export interface JobRouteDeclaration<S extends string, I extends JobRouteInput<S>> {
  path: PostPath
  operationId: string
  summary: string
  /** Who may call it (`optionalBearer` where an anonymous device may). */
  security: Record<string, string[]>[]
  /**
   * The two bodies and where each names its images (`sources`); the JSON body's `options` member
   * also parses the multipart `options` part (a JSON string).
   */
  body: { json: z.ZodObject<{ options: z.ZodType }>; multipart: z.ZodObject; sources: SourceSlots<S> }
  images: ImageProblems
  /** The kind's accept (`slotJob({...})`, services/slot-jobs.ts), given how to read each image's source and the options. */
  accept: (ctx: AcceptContext, read: StagedRead<I>) => Promise<Accepted<Job>>
}

/** What a job-creating route hands its accept: each named image's source, and the options. */
type JobRouteInput<S extends string> = SlotInput<S>

/** The router serving (and documenting) one job-creating route. */
export function jobRoute<S extends string, I extends JobRouteInput<S>>(declared: JobRouteDeclaration<S, I>) {
  const { body, accept } = declared
  const route = createRoute({
    method: 'post',
    path: declared.path,
    operationId: declared.operationId,
    summary: declared.summary,
    tags: ['Processing'],
    security: declared.security,
    middleware: [authorize(`POST ${declared.path}`)] as const,
    request: {
      headers: IdempotencyHeaders,
      // Served not `required`: zod-openapi would then run both validators on every request. The
      // media-type gate still refuses other types, and an absent body is refused in the handler.
      // The document says `required` (below), as the handler holds it.
      body: {
        required: false,
        content: {
          'application/json': { schema: body.json },
          'multipart/form-data': { schema: body.multipart, encoding: jsonParts('options') },
        },
      },
    },
    responses: jobCreatedResponses(declared.images),
  })
  const parts = partsOf(body.multipart)
  const fromJson = (raw: Record<string, unknown>) =>
    ({ ...sourcesFromJson(raw, body.sources), options: raw.options }) as I
  const fromForm = async (c: Context<AppEnv>, jobId: string) => {
    const { texts, sources } = await sourcesFromForm(c.req.raw, c.env.BUCKET, parts, jobId, body.sources)
    const options = optionsPart(texts.options, body.json.shape.options)
    return { ...sources(), options } as I
  }
  const router = createRouter()
  documentRoute(router, { ...route, request: { ...route.request, body: { ...route.request.body, required: true } } })
  return router.openapi(streamedMultipart(route), async (c) => {
    const { ctx, multipart } = jobRequest(c, c.req.valid('header'))
    // A multipart body is read as a stream, its files stored under the job's prefix as they arrive.
    // A JSON body is read first: a bad one is refused before anything could be stored.
    const input = multipart ? undefined : fromJson(c.req.valid('json') as Record<string, unknown>)
    const accepted = await accept(ctx, input ? async () => input : (jobId) => fromForm(c, jobId))
    acceptedHeaders(c, accepted, ctx.waitSeconds)
    return accepted.finished ? c.json(accepted.job, 200) : c.json(accepted.job, 202)
  })
}

/**
 * The responses of a job-creating route; `images` describes its 413/415/422 for its image fields.
 * The problems every route with its declaration can answer are added by `withProblems`.
 */
function jobCreatedResponses(images: ImageProblems) {
  return {
    200: json(JobSchema, 'The job finished within the bounded wait'),
    202: {
      ...json(JobSchema, 'Accepted; poll Location or stream its events'),
      headers: { Location: { schema: { type: 'string' as const } } },
    },
    402: problemContent('No credits remain (`quota_exhausted`)'),
    413: problemContent(
      `${images.tooLarge} (\`image_too_large\`), or a JSON body over its limit (\`request_too_large\`)`,
    ),
    415: problemContent(images.unsupported),
    422: problemContent(images.unsafeUrl),
    503: problemContent('The job could not be scheduled now (`processor_unavailable`); retry after `Retry-After`'),
  }
}

/**
 * The multipart `options` part, read as the JSON body's `options` member: a JSON document, and
 * when the part is left out, that member's default (an error where it has none).
 */
function optionsPart(raw: string | undefined, schema: z.ZodType): unknown {
  if (raw === undefined) {
    const absent = schema.safeParse(undefined)
    if (absent.success) return absent.data
  }
  return parseJsonField(raw, schema)
}

/** The accept context of a job-creating request, and whether its body is a form (read as multipart). */
function jobRequest(
  c: Context<AppEnv>,
  headers: { 'idempotency-key'?: string; prefer?: string },
): { ctx: AcceptContext; multipart: boolean } {
  const idempotencyKey = requireIdempotencyKey(headers['idempotency-key'])
  const waitSeconds = preferWaitSeconds(headers.prefer)
  const contentType = (c.req.header('content-type') ?? '').toLowerCase()
  if (!contentType) throw new ApiError('invalid_input', 'Expected a JSON or multipart/form-data body')
  // A url-encoded form goes the multipart way too, where the reader refuses it (415).
  return { ctx: acceptContext(c, idempotencyKey, waitSeconds), multipart: isFormBody(contentType) }
}

/** What the accept path needs of a request: who asks, its ids, its key and how long it waits. */
export function acceptContext(
  c: Context<AppEnv>,
  idempotencyKey: string | undefined,
  waitSeconds: number | null = null,
): AcceptContext {
  return {
    env: c.env,
    inference: c.get('services').inference,
    auth: c.get('auth'),
    requestId: c.get('requestId'),
    traceId: c.get('traceId'),
    idempotencyKey,
    waitSeconds,
  }
}

/** Sets `Location`, and `Preference-Applied` when the request asked for a wait. */
export function acceptedHeaders(c: Context<AppEnv>, accepted: Accepted<unknown>, waitSeconds: number | null): void {
  if (accepted.location) c.header('Location', accepted.location)
  if (waitSeconds !== null) c.header('Preference-Applied', `wait=${waitSeconds}`)
}
