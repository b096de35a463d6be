/**
 * @module
 * Accepting a virtual try-on (SPEC.md §4 POST /v1/virtual-try-ons; experimental): idempotency,
 * the two sources (each an upload, a multipart file or a guarded URL fetch), a credit hold and the
 * `virtual_try_on` job, then the bounded wait — the removal's path with two images.
 */
import { MAX_SEED } from '../contract/catalog'
import type { TryOnOptions } from '../contract/tryon'
import { ApiError } from '../errors'
import { sha256Hex } from '../lib/crypto'
import { JOB_KINDS } from '../jobs'
import { getUsage, quotaExhausted } from './credits'
import { idempotent, type StoredResponse } from './idempotency'
import { assertProcessorAvailable, InferenceClient } from './inference'
import {
  discardSourcesIfRefused,
  jobSourcePrefix,
  resolveSource,
  type SourceInput,
  sourceFingerprint,
} from './job-sources'
import { acceptJobs, type JobStart, jobResponse } from './jobs'
import type { AcceptContext } from './removals'
import { noSuchUpload, uploadsStillReady } from './uploads'

export interface TryOnInput {
  person: SourceInput
  garment: SourceInput
  options: TryOnOptions
}

const fieldsOf = (name: 'person' | 'garment') => ({
  uploadId: `${name}.uploadId`,
  sourceUrl: `${name}.sourceUrl`,
  file: name,
})

export async function acceptTryOn(ctx: AcceptContext, input: TryOnInput): Promise<StoredResponse> {
  const { env, auth } = ctx
  const hash = await sha256Hex(
    JSON.stringify({
      person: await sourceFingerprint(input.person),
      garment: await sourceFingerprint(input.garment),
      options: input.options,
    }),
  )
  return idempotent(env.DB, auth.workspaceId, 'virtual-try-ons', ctx.idempotencyKey, hash, async () => {
    if ((await getUsage(env.DB, auth.workspaceId)).available <= 0) throw quotaExhausted()
    await assertProcessorAvailable(InferenceClient.fromEnv(env))
    return createJob(ctx, input)
  })
}

async function createJob(ctx: AcceptContext, input: TryOnInput): Promise<StoredResponse> {
  const jobId = crypto.randomUUID()
  return discardSourcesIfRefused(ctx.env, jobId, () => createJobWithId(ctx, input, jobId))
}

async function createJobWithId(ctx: AcceptContext, input: TryOnInput, jobId: string): Promise<StoredResponse> {
  const { env, auth } = ctx
  const stored = (name: 'person' | 'garment') =>
    resolveSource(env, auth.workspaceId, `${jobSourcePrefix(jobId)}/${name}`, input[name], fieldsOf(name))
  const person = await stored('person')
  const garment = await stored('garment')
  // Every random choice follows the seed; one is picked here when none was given.
  const options = {
    ...input.options,
    seed: input.options.seed ?? crypto.getRandomValues(new Uint32Array(1))[0] % (MAX_SEED + 1),
  }
  const start: JobStart<'virtual_try_on'> = {
    jobId,
    workspaceId: auth.workspaceId,
    correlationId: ctx.requestId,
    kind: 'virtual_try_on',
    input: {
      person: { key: person.key, size: person.size, sha256: person.sha256 },
      garment: { key: garment.key, size: garment.size, sha256: garment.sha256 },
      options,
    },
  }
  const row = {
    id: jobId,
    workspaceId: auth.workspaceId,
    kind: 'virtual_try_on' as const,
    options,
    sourceKey: person.key,
    otherSourceKeys: [garment.key],
    format: 'png',
  }
  // The retention sweep may have removed a day-old upload since `resolveSource` read it.
  const uploads = (['person', 'garment'] as const).flatMap((name) => {
    const source = input[name]
    return source.kind === 'upload' ? [{ id: source.uploadId, field: fieldsOf(name).uploadId }] : []
  })
  const unstarted = await acceptJobs(env, [{ row, start }], {
    hold: JOB_KINDS.virtual_try_on.holdsCredit,
    ...(uploads.length
      ? {
          guard: uploadsStillReady(
            auth.workspaceId,
            uploads.map((u) => u.id),
          ),
          refused: () => goneUpload(env.DB, auth.workspaceId, uploads),
        }
      : {}),
  })
  if (unstarted) throw new ApiError('processor_unavailable', 'The job could not be scheduled', { retryAfter: 1 })
  return jobResponse(env, auth.workspaceId, jobId, ctx.waitSeconds)
}

/** The answer naming the first of `uploads` that is gone now, as a request naming it now would get. */
async function goneUpload(db: D1Database, workspaceId: string, uploads: { id: string; field: string }[]) {
  const { results } = await db
    .prepare(
      `SELECT id FROM uploads WHERE workspace_id = ? AND status = 'ready' AND id IN (SELECT value FROM json_each(?))`,
    )
    .bind(workspaceId, JSON.stringify(uploads.map((u) => u.id)))
    .all<{ id: string }>()
  const ready = new Set(results.map((r) => r.id))
  const gone = uploads.find((u) => !ready.has(u.id)) ?? uploads[0]
  return noSuchUpload(gone.id, gone.field)
}
