/**
 * @module
 * Accepting a removal (SPEC.md §4 POST /v1/removals): idempotency, the source (an upload, a
 * multipart file or a guarded URL fetch), the credit hold and the job, then the bounded wait.
 */
import type { Env } from '../env'
import { ApiError, issueToApiError } from '../errors'
import { sha256Hex } from '../lib/crypto'
import { MAX_IMAGE_BYTES } from '../lib/image-sniff'
import { RemovalOptionsSchema, type RemovalOptions } from '../schemas/removal'
import type { Job } from '../schemas/job'
import type { AuthContext } from './auth'
import { getUsage, quotaExhausted } from './credits'
import { claimIdempotencyKey, type StoredResponse } from './idempotency'
import { assertProcessorAvailable, InferenceClient } from './inference'
import { ANONYMOUS_MAX_PIXELS, takeAllowance } from './anonymous'
import { JOB_KINDS } from '../jobs'
import { acceptJobs, findJob, type JobStart, toJob } from './jobs'
import { readLimited, storeBytes, type StoredSource } from './sources'
import {
  allowlistFromEnv,
  DohResolver,
  guardedFetch,
  SourceFetchError,
  SourceTooLargeError,
  UnsafeUrlError,
} from './ssrf'
import { findUpload } from './uploads'

export type RemovalInput =
  | { kind: 'upload'; uploadId: string; options: RemovalOptions }
  | { kind: 'url'; sourceUrl: string; options: RemovalOptions }
  | { kind: 'file'; file: File; options: RemovalOptions }

export interface AcceptContext {
  env: Env
  auth: AuthContext
  requestId: string
  idempotencyKey: string
  waitSeconds: number | null
}

/** Parses the multipart `options` field (a JSON string) with the same strict schema as JSON bodies. */
export function parseOptionsField(raw: unknown): RemovalOptions {
  if (typeof raw !== 'string')
    throw new ApiError('invalid_input', 'Expected options as a JSON string', { field: 'options' })
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    throw new ApiError('invalid_input', 'Expected options to be valid JSON', { field: 'options' })
  }
  const parsed = RemovalOptionsSchema.safeParse(value)
  if (!parsed.success) throw issueToApiError(parsed.error.issues[0], ['options'])
  return parsed.data
}

async function fingerprint(input: RemovalInput): Promise<string> {
  if (input.kind === 'file') {
    const bytes = await sha256Hex(await input.file.arrayBuffer())
    return sha256Hex(JSON.stringify({ file: bytes, options: input.options }))
  }
  const { kind, options } = input
  return sha256Hex(JSON.stringify({ kind, source: kind === 'url' ? input.sourceUrl : input.uploadId, options }))
}

export async function acceptRemoval(ctx: AcceptContext, input: RemovalInput): Promise<StoredResponse> {
  const { env, auth } = ctx
  const claim = await claimIdempotencyKey(
    env.DB,
    auth.workspaceId,
    'removals',
    ctx.idempotencyKey,
    await fingerprint(input),
  )
  if (claim.kind === 'replay') return claim.response
  try {
    const response = await runAccept(ctx, input)
    await claim.complete(response)
    return response
  } catch (err) {
    await claim.release()
    throw err
  }
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
  const { env, auth } = ctx
  const anonymous = auth.kind === 'anonymous'
  const jobId = crypto.randomUUID()
  const source = await resolveSource(env, auth.workspaceId, jobId, input)
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
  const unstarted = await acceptJobs(env, [{ row, start }], {
    hold: !anonymous && JOB_KINDS.remove_background.holdsCredit,
  })
  if (unstarted) throw new ApiError('processor_unavailable', 'The job could not be scheduled', { retryAfter: 1 })
  const stub = env.JOB_RUN.get(env.JOB_RUN.idFromName(jobId))
  const finished = ctx.waitSeconds ? await stub.waitForTerminal(ctx.waitSeconds * 1000) : false
  const view: Job = await toJob(await findJob(env.DB, auth.workspaceId, jobId), env.RESULT_SIGNING_KEY)
  return { status: finished ? 200 : 202, body: JSON.stringify(view), location: view.links.self }
}

async function resolveSource(env: Env, workspaceId: string, jobId: string, input: RemovalInput): Promise<StoredSource> {
  switch (input.kind) {
    case 'upload': {
      const upload = await findUpload(env.DB, workspaceId, input.uploadId, 'uploadId')
      if (upload.status !== 'ready' || !upload.sha256 || !upload.byte_size) {
        throw new ApiError('invalid_input', `Upload ${upload.id} is not ready; complete it first`, {
          field: 'uploadId',
        })
      }
      return { key: upload.object_key, size: upload.byte_size, sha256: upload.sha256, mimeType: upload.mime_type ?? '' }
    }
    case 'file': {
      if (input.file.size > MAX_IMAGE_BYTES) {
        throw new ApiError(
          'image_too_large',
          `Expected at most ${MAX_IMAGE_BYTES} bytes but received ${input.file.size}`,
          { field: 'image' },
        )
      }
      return storeBytes(env.BUCKET, `sources/${jobId}`, new Uint8Array(await input.file.arrayBuffer()), 'image')
    }
    case 'url':
      return storeBytes(env.BUCKET, `sources/${jobId}`, await fetchSource(env, input.sourceUrl), 'sourceUrl')
  }
}

async function fetchSource(env: Env, url: string): Promise<Uint8Array> {
  try {
    const res = await guardedFetch(url, {
      resolver: new DohResolver({ url: env.DNS_RESOLVER_URL }),
      allowlist: allowlistFromEnv(env),
      maxRedirects: 5,
      maxBytes: MAX_IMAGE_BYTES,
      signal: AbortSignal.timeout(30_000),
    })
    if (!res.body) throw new SourceFetchError('The source URL returned no body')
    return await readLimited(res.body)
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new ApiError('unsafe_url', `The source URL is not allowed: ${err.reason}`, { field: 'sourceUrl' })
    }
    if (err instanceof SourceTooLargeError) {
      throw new ApiError('image_too_large', err.message, { field: 'sourceUrl' })
    }
    if (err instanceof SourceFetchError) throw new ApiError('invalid_input', err.message, { field: 'sourceUrl' })
    if (err instanceof ApiError) throw err
    throw new ApiError('invalid_input', `The source URL could not be fetched: ${String(err)}`, { field: 'sourceUrl' })
  }
}
