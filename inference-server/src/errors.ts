/**
 * Every failure the server reports is an `InferenceError`: one code, one HTTP status and a
 * retryable flag, as in the table of docs/inference-protocol.md. Routes never build error
 * bodies themselves; `server.ts` turns an `InferenceError` into JSON in one place.
 */

import {
  INFERENCE_ERRORS,
  type InferenceErrorBody,
  type InferenceErrorCode,
  type InferenceErrorStatus,
} from '../../src/contract/errors.js'

export type { InferenceErrorBody, InferenceErrorCode }

export class InferenceError extends Error {
  readonly code: InferenceErrorCode
  readonly status: InferenceErrorStatus
  readonly retryable: boolean
  /** Seconds, sent as `Retry-After` (only for 503). */
  readonly retryAfter?: number

  constructor(code: InferenceErrorCode, message: string, options: { cause?: unknown; retryAfter?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'InferenceError'
    this.code = code
    this.status = INFERENCE_ERRORS[code].status
    this.retryable = INFERENCE_ERRORS[code].retryable
    this.retryAfter = options.retryAfter
  }

  toJSON(): InferenceErrorBody {
    return { code: this.code, message: this.message, retryable: this.retryable }
  }
}

/** Wraps anything thrown into an `InferenceError`; unknown failures become `processing_failed`. */
export function toInferenceError(err: unknown, context = 'Processing failed'): InferenceError {
  if (err instanceof InferenceError) return err
  const detail = err instanceof Error ? err.message : String(err)
  return new InferenceError('processing_failed', `${context}: ${detail}`, { cause: err })
}
