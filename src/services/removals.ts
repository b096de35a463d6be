/**
 * @module
 * Accepting a removal (SPEC.md §4 POST /v1/removals): idempotency, the source (an upload, a
 * multipart file or a guarded URL fetch), the credit hold and the job, then the bounded wait.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { parseJsonField } from '../lib/form'
import { sha256Hex } from '../lib/crypto'
import { RemovalOptionsSchema, type RemovalOptions } from '../schemas/removal'
import type { AuthContext } from './auth'
import { getUsage, quotaExhausted } from './credits'
import { idempotent, type StoredResponse } from './idempotency'
import { assertProcessorAvailable, InferenceClient } from './inference'
import { ANONYMOUS_MAX_PIXELS, takeAllowance } from './anonymous'
import { JOB_KINDS } from '../jobs'
import { acceptJobs, type JobStart, jobResponse } from './jobs'
import { noSuchUpload, uploadsStillReady } from './uploads'
import {
  discardSourcesIfRefused,
  jobSourcePrefix,
  resolveSource,
  type SourceInput,
  sourceFingerprint,
} from './job-sources'

export type RemovalInput = { source: SourceInput; options: RemovalOptions }

export interface AcceptContext {
  env: Env
  auth: AuthContext
  requestId: string
  idempotencyKey: string
  waitSeconds: number | null
}

/** Where a removal's errors point: the JSON members and the multipart part. */
const FIELDS = { uploadId: 'uploadId', sourceUrl: 'sourceUrl', file: 'image' }

/** Parses the multipart `options` field (a JSON string) with the same strict schema as JSON bodies. */
export function parseOptionsField(raw: unknown): RemovalOptions {
  return parseJsonField(raw, RemovalOptionsSchema)
}

export async function acceptRemoval(ctx: AcceptContext, input: RemovalInput): Promise<StoredResponse> {
  const { env, auth } = ctx
  const hash = await sha256Hex(
    JSON.stringify({ source: await sourceFingerprint(input.source), options: input.options }),
  )
  return idempotent(env.DB, auth.workspaceId, 'removals', ctx.idempotencyKey, hash, () => runAccept(ctx, input))
}

async function runAccept(ctx: AcceptContext, input: RemovalInput): Promise<StoredResponse> {
  const { env, auth } = ctx
  const anonymous = auth.kind === 'anonymous'
  if (!anonymous && (await getUsage(env.DB, auth.workspaceId)).available <= 0) throw quotaExhausted()
  await assertProcessorAvailable(InferenceClient.fromEnv(env))
  const refund = anonymous ? await takeAllowance(env, auth) : null
  try {
    return await createJob(ctx, input)
  } catch (err) {
    await refund?.()
    throw err
  }
}

async function createJob(ctx: AcceptContext, input: RemovalInput): Promise<StoredResponse> {
  const jobId = crypto.randomUUID()
  return discardSourcesIfRefused(ctx.env, jobId, () => createJobWithId(ctx, input, jobId))
}

async function createJobWithId(ctx: AcceptContext, input: RemovalInput, jobId: string): Promise<StoredResponse> {
  const { env, auth } = ctx
  const anonymous = auth.kind === 'anonymous'
  const source = await resolveSource(env, auth.workspaceId, jobSourcePrefix(jobId), input.source, FIELDS)
  const row = {
    id: jobId,
    workspaceId: auth.workspaceId,
    kind: 'remove_background' as const,
    options: input.options,
    sourceKey: source.key,
    format: 'png',
  }
  const start: JobStart<'remove_background'> = {
    jobId,
    workspaceId: auth.workspaceId,
    correlationId: ctx.requestId,
    kind: 'remove_background',
    input: {
      source: { key: source.key, size: source.size, sha256: source.sha256 },
      options: input.options,
      ...(anonymous ? { maxPixels: ANONYMOUS_MAX_PIXELS } : {}),
    },
  }
  // Anonymous jobs spend the daily allowance instead of credits.
  const upload = input.source.kind === 'upload' ? input.source.uploadId : null
  const unstarted = await acceptJobs(env, [{ row, start }], {
    hold: !anonymous && JOB_KINDS.remove_background.holdsCredit,
    // The retention sweep may have removed a day-old upload since `resolveSource` read it.
    ...(upload
      ? { guard: uploadsStillReady(auth.workspaceId, [upload]), refused: () => noSuchUpload(upload, FIELDS.uploadId) }
      : {}),
  })
  if (unstarted) throw new ApiError('processor_unavailable', 'The job could not be scheduled', { retryAfter: 1 })
  return jobResponse(env, auth.workspaceId, jobId, ctx.waitSeconds)
}
