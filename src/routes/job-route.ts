/**
 * @module
 * What every job-creating route shares (SPEC.md §4 Processing): the headers it reads
 * (`Idempotency-Key`, `Prefer: wait`), the body's media type, and the answer — 200 with the job
 * when it ended within the wait, else 202 with `Location`.
 */
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { ApiError, errorResponses, problemContent } from '../errors'
import { isFormBody } from '../lib/multipart-stream'
import { preferWaitSeconds } from '../lib/router'
import { deleteByPrefix } from '../lib/storage'
import { json } from '../schemas/common'
import { JobSchema } from '../schemas/job'
import type { AcceptContext, Accepted } from '../services/accept'
import { requireIdempotencyKey } from '../services/idempotency'
import { discardSourcesIfRefused, jobSourcePrefix } from '../services/job-sources'

/** The responses of a job-creating route; `images` describes its 413/415/422 for its image fields. */
export function jobCreatedResponses(images: { tooLarge: string; unsupported: string; unsafeUrl: string }) {
  return {
    200: json(JobSchema, 'The job finished within the bounded wait'),
    202: {
      ...json(JobSchema, 'Accepted; poll Location or stream its events'),
      headers: { Location: { schema: { type: 'string' as const } } },
    },
    ...errorResponses,
    402: problemContent('No credits remain'),
    409: problemContent('Idempotency-Key reused with different input'),
    413: problemContent(images.tooLarge),
    415: problemContent(images.unsupported),
    422: problemContent(images.unsafeUrl),
  }
}

/** The accept context of a job-creating request, and whether its body is a form (read as multipart). */
export function jobRequest(
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

/**
 * Accepts a job whose multipart body is read as a stream: `read` stores its files in R2 as they
 * arrive, under `jobSourcePrefix(jobId)` of the job they are for (its id chosen first), before
 * the accept hashes, checks and holds. Whatever refuses the request (a bad part, no credits, a
 * conflict) leaves none of those bytes stored, nor does a replay, whose job has its own.
 */
export async function acceptStreamed<I, T extends { id: string }>(
  ctx: AcceptContext,
  read: (jobId: string) => Promise<I>,
  accept: (ctx: AcceptContext, input: I) => Promise<Accepted<T>>,
): Promise<Accepted<T>> {
  const jobId = crypto.randomUUID()
  const accepted = await discardSourcesIfRefused(ctx.env, jobId, async () =>
    accept({ ...ctx, jobId }, await read(jobId)),
  )
  if (accepted.job.id !== jobId) await deleteByPrefix(ctx.env.BUCKET, jobSourcePrefix(jobId))
  return accepted
}

/** Sets `Location`, and `Preference-Applied` when the request asked for a wait. */
export function acceptedHeaders(c: Context<AppEnv>, accepted: Accepted<unknown>, waitSeconds: number | null): void {
  if (accepted.location) c.header('Location', accepted.location)
  if (waitSeconds !== null) c.header('Preference-Applied', `wait=${waitSeconds}`)
}
