/**
 * @module
 * The inference server's error codes with their HTTP status and retryability
 * (docs/inference-protocol.md "Errors"). The server raises them; the edge maps them back.
 */

export const INFERENCE_ERRORS = {
  invalid_input: { status: 400, retryable: false },
  invalid_signature: { status: 401, retryable: false },
  image_too_large: { status: 413, retryable: false },
  unsupported_media: { status: 415, retryable: false },
  processing_failed: { status: 500, retryable: false },
  processor_unavailable: { status: 503, retryable: true },
} as const

export type InferenceErrorCode = keyof typeof INFERENCE_ERRORS
export type InferenceErrorStatus = (typeof INFERENCE_ERRORS)[InferenceErrorCode]['status']

/** Codes that describe the caller's image or options: a job failing with one keeps the code. */
export const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set<InferenceErrorCode>([
  'invalid_input',
  'unsupported_media',
  'image_too_large',
])

export function isInferenceErrorCode(code: unknown): code is InferenceErrorCode {
  return typeof code === 'string' && Object.hasOwn(INFERENCE_ERRORS, code)
}

/** The JSON body of an error answer, and of an `error` frame. */
export interface InferenceErrorBody {
  code: InferenceErrorCode
  message: string
  retryable: boolean
}
