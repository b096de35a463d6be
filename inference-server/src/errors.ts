/**
 * Every failure the server reports is an `InferenceError`: one code, one HTTP status and a
 * retryable flag, as in the table of docs/inference-protocol.md. Routes never build error
 * bodies themselves; `server.ts` turns an `InferenceError` into JSON in one place.
 */

export type InferenceErrorCode =
  | 'invalid_input'
  | 'invalid_signature'
  | 'image_too_large'
  | 'unsupported_media'
  | 'processing_failed'
  | 'processor_unavailable'

/** Status and retryability per code (the protocol's error table). */
export const codeToStatus: Record<
  InferenceErrorCode,
  { status: 400 | 401 | 413 | 415 | 500 | 503; retryable: boolean }
> = {
  invalid_input: { status: 400, retryable: false },
  invalid_signature: { status: 401, retryable: false },
  image_too_large: { status: 413, retryable: false },
  unsupported_media: { status: 415, retryable: false },
  processing_failed: { status: 500, retryable: false },
  processor_unavailable: { status: 503, retryable: true },
}

export interface InferenceErrorBody {
  code: InferenceErrorCode
  message: string
  retryable: boolean
}

export class InferenceError extends Error {
  readonly code: InferenceErrorCode
  readonly status: 400 | 401 | 413 | 415 | 500 | 503
  readonly retryable: boolean
  /** Seconds, sent as `Retry-After` (only for 503). */
  readonly retryAfter?: number

  constructor(code: InferenceErrorCode, message: string, options: { cause?: unknown; retryAfter?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'InferenceError'
    this.code = code
    this.status = codeToStatus[code].status
    this.retryable = codeToStatus[code].retryable
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
