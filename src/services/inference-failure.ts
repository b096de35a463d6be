/**
 * @module
 * A failure reported by, or on the way to, the inference server, and what it means for whoever
 * made the call (a job's retry policy, a client waiting on a revision). Its own module so the
 * client (inference.ts) and the answer's reader (inference-answer.ts) share it without a cycle.
 */
import { CLIENT_ERROR_CODES, INFERENCE_ERRORS, isInferenceErrorCode } from '../contract/errors'
import type { ErrorFrame } from '../contract/frames'

/** A failure reported by, or on the way to, the inference server. */
export class InferenceFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly retryable: boolean,
    readonly retryAfter?: number,
  ) {
    super(message)
  }

  /** A failure the server reported in an `error` frame, after its answer began. */
  static fromFrame(frame: ErrorFrame): InferenceFailure {
    const status = isInferenceErrorCode(frame.code) ? INFERENCE_ERRORS[frame.code].status : 500
    return new InferenceFailure(frame.code, frame.message, status, frame.retryable)
  }

  /** Whether the job's own input caused it (the job fails with this code; no retry helps). */
  get isClientError(): boolean {
    return CLIENT_ERROR_CODES.has(this.code)
  }

  /**
   * What the failure means for whoever made the call, in one place for the job runner's retry
   * policy (durable/retry-policy.ts) and for calls a client waits on (`inferenceProblem`):
   * - `client`: the input caused it; fail with this code, no retry helps;
   * - `saturated`: the server is busy ("503, retry after"): not a failure of the work;
   * - `transient`: the server or the connection was lost: another attempt may succeed;
   * - `fatal`: the work failed on the server and would fail again.
   */
  get kind(): FailureKind {
    if (this.isClientError) return 'client'
    if (this.status === 503 && this.retryAfter !== undefined) return 'saturated'
    return this.retryable ? 'transient' : 'fatal'
  }
}

export type FailureKind = 'client' | 'saturated' | 'transient' | 'fatal'
