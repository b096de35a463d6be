/**
 * @module
 * What a job kind is to the runner (docs/architecture.md "Adding a job kind"). The runner
 * (`src/durable/job-run.ts`) owns status, stages, slots, saturation waits, retries, cancellation,
 * credit settlement, events and webhooks; a kind says only what its work reads, which inference
 * route does it, and where what comes back is stored.
 */
import type { OutputFrame } from '../contract/frames'
import type { Env } from '../env'
import type { ErrorCode } from '../errors'
import type { ProjectEventType } from '../lib/events'
import type { RequestPart, StoredOutput } from '../services/inference'

export type { StoredOutput }

/** A source image kept in R2, with the length and hash the signature needs. */
export interface StoredSource {
  key: string
  size: number
  sha256: string
}

/** The job a kind works for. */
export interface KindJob<Input> {
  jobId: string
  workspaceId: string
  input: Input
}

export interface JobKind<Input> {
  /** The inference server's route for this kind (docs/inference-protocol.md). */
  route: string
  /** Whether a job of this kind holds a credit from accept to end (charged on success). */
  holdsCredit: boolean
  /** The request's parts: options and the sources, read from R2 as streams. */
  parts(env: Env, job: KindJob<Input>): Promise<RequestPart[]>
  /** The R2 key of an output (null: not kept). The output named `result` becomes the job's result. */
  outputKey(job: KindJob<Input>, output: OutputFrame): string | null
  /**
   * After every output is stored, before the job succeeds (e.g. record a revision). Must be
   * idempotent. Throws `JobRejected` when the result cannot be kept.
   */
  completed?(env: Env, job: KindJob<Input>, outputs: StoredOutput[]): Promise<void>
  /**
   * Internal kinds (a project's refinements and exports) are not public jobs: their job events stay
   * in the runner, and when the job ends `event` goes to webhooks and the project's stream, its data
   * the resource as `describe` reads it then.
   */
  report?: {
    event: ProjectEventType
    describe(env: Env, job: KindJob<Input>): Promise<{ projectId: string } & Record<string, unknown>>
  }
}

/**
 * The job cannot be done, or its result cannot be kept (thrown by `parts` or `completed`): it
 * fails with `code`, and no retry would help.
 */
export class JobRejected extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message)
  }
}

/** A source the job needs is gone from R2 (deleted or expired). */
export class SourceMissing extends JobRejected {
  constructor(message: string) {
    super('processing_failed', message)
  }
}

/** Reads a stored source as a request part. */
export async function sourcePart(env: Env, name: string, source: StoredSource): Promise<RequestPart> {
  const object = await env.BUCKET.get(source.key)
  if (!object) throw new SourceMissing(`The source image ${name} is missing`)
  return { name, type: 'application/octet-stream', length: source.size, sha256: source.sha256, body: object.body }
}
