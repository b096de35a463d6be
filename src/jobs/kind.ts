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
import { MAX_PIXELS, SNIFF_BYTES, sniffImage } from '../lib/image-sniff'
import type { RequestPart } from '../services/inference'
import type { StoredOutput } from '../services/inference-answer'

export type { StoredOutput }

/** An object kept in R2, with the length and hash an inference call's signature needs (a source, a mask). */
export interface StoredObject {
  key: string
  size: number
  /** base64url SHA-256 of the bytes. */
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
  /**
   * How heavy one megapixel of this job's input is, against a balanced removal (1): its inference
   * call's deadline scales with it (src/services/deadlines.ts). Default 1.
   */
  workScale?(input: Input): number
  /**
   * Pixels the call makes beyond those it reads, counted in its deadline like its inputs' (an
   * export's canvas: 49 MP from a 1 MP photo). Default 0: a mask or cutout is its source's size.
   */
  outputPixels?(input: Input): number
  /** The job's level (quality) as its logs and datapoints name it, for kinds that have one. */
  level?(input: Input): string
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

/** Reads a stored source as a request part, with the pixels its header declares. */
export async function sourcePart(env: Env, name: string, source: StoredObject): Promise<RequestPart> {
  const pixels = await headerPixels(env.BUCKET, source.key)
  const object = await env.BUCKET.get(source.key)
  if (!object) throw new SourceMissing(`The source image ${name} is missing`)
  return {
    name,
    type: 'application/octet-stream',
    length: source.size,
    sha256: source.sha256,
    body: object.body,
    pixels,
  }
}

/**
 * The pixels a stored image's header declares, read from its head (a ranged read: every kind of
 * source — upload, multipart, URL, a revision's mask — lands in R2 without its size noted). An
 * image whose header does not say counts as the largest allowed, so its deadline is never short.
 */
async function headerPixels(bucket: R2Bucket, key: string): Promise<number> {
  const head = await bucket.get(key, { range: { offset: 0, length: SNIFF_BYTES } })
  if (!head) return MAX_PIXELS
  const sniffed = sniffImage(new Uint8Array(await head.arrayBuffer()))
  return sniffed?.width && sniffed.height ? sniffed.width * sniffed.height : MAX_PIXELS
}
