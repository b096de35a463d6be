/**
 * @module
 * The API's error codes (SPEC.md §7), written once: each code's HTTP status, its problem `title`,
 * whether it may be retried unchanged, and what it means to a reader. src/errors.ts builds the
 * problems from it; scripts/build-web.ts writes the `/errors/<code>` pages from it. It imports
 * nothing at run time, so the build script can load it under Node's types.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status'

export const ERROR_STATUS = {
  invalid_input: 400,
  invalid_api_key: 401,
  quota_exhausted: 402,
  insufficient_scope: 403,
  job_not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  revision_conflict: 409,
  asset_expired: 410,
  image_too_large: 413,
  unsupported_media: 415,
  unsafe_url: 422,
  authorization_pending: 428,
  rate_limit_exceeded: 429,
  processing_failed: 500,
  processor_unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>

export type ErrorCode = keyof typeof ERROR_STATUS

/** The problem's `title` of each code. */
export const ERROR_TITLES: Record<ErrorCode, string> = {
  invalid_input: 'Invalid input',
  invalid_api_key: 'Invalid API key',
  quota_exhausted: 'Quota exhausted',
  insufficient_scope: 'Insufficient scope',
  job_not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  idempotency_conflict: 'Idempotency conflict',
  revision_conflict: 'Revision conflict',
  asset_expired: 'Asset expired',
  image_too_large: 'Image too large',
  unsupported_media: 'Unsupported media',
  unsafe_url: 'Unsafe URL',
  authorization_pending: 'Authorization pending',
  rate_limit_exceeded: 'Rate limit exceeded',
  processing_failed: 'Processing failed',
  processor_unavailable: 'Processor unavailable',
}

/** Codes a client may retry unchanged (after `Retry-After` where given). */
export const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'authorization_pending',
  'rate_limit_exceeded',
  'processor_unavailable',
])

/**
 * What each code means to the person reading the problem, for its page at `/errors/<code>` (the
 * problem's `type`; scripts/build-web.ts writes one page per code from this table). Whether the
 * unchanged request may be sent again is {@link RETRYABLE_CODES}, the rule the problem's
 * `retryable` reports; `retry` only says why, and when a retry can succeed.
 */
export const ERROR_HELP: Record<ErrorCode, { meaning: string; retry: string; fix: string }> = {
  invalid_input: {
    meaning:
      "The request was refused before any work began: a field, parameter, header, image or its dimensions is not what the operation accepts. The problem's `field` names the first offending part and `detail` says what was expected.",
    retry: 'The same request fails the same way; no credit was held.',
    fix: 'Correct the part named by `field` (see the operation in the API reference) and send the request again.',
  },
  invalid_api_key: {
    meaning:
      'No valid credential came with the request: the API key or session token is absent, malformed, expired or revoked.',
    retry: 'The same credential is refused again.',
    fix: 'Send `Authorization: Bearer <key>` with a live key (create one on the page or with `cutout login`), or sign in again.',
  },
  quota_exhausted: {
    meaning: 'The workspace has no processing credits left in this period. Nothing was run or charged.',
    retry: 'It succeeds once credits are added or the period resets (`GET /v1/usage` shows when).',
    fix: 'Wait for the next period or add credits to the workspace; `GET /v1/usage` shows the balance.',
  },
  insufficient_scope: {
    meaning: 'The credential is valid but lacks the scope this operation needs.',
    retry: 'The same key is refused again.',
    fix: "Use a key created with the scope the problem's `detail` names, or a signed-in session where the operation needs one.",
  },
  job_not_found: {
    meaning:
      'The resource (job, project, upload, key, webhook, or the route itself) does not exist in the authenticated workspace.',
    retry: 'The same request finds nothing again.',
    fix: 'Check the id and the workspace of the credential; resources of another workspace are reported as not found.',
  },
  method_not_allowed: {
    meaning:
      'The path exists but does not accept this HTTP method. The `Allow` header lists the methods it does accept.',
    retry: 'The same method is refused again.',
    fix: 'Use one of the methods in `Allow`.',
  },
  idempotency_conflict: {
    meaning:
      'This `Idempotency-Key` was already used with a different request body or target, so the earlier answer cannot be replayed for it.',
    retry: 'This key with this body is refused again.',
    fix: 'Send the original body to replay its answer, or use a new `Idempotency-Key` for a new request.',
  },
  revision_conflict: {
    meaning:
      'The edit was based on a revision that is no longer the newest: someone or something saved another revision meanwhile.',
    retry: 'The same base stays stale: rebase first.',
    fix: 'Fetch the project, apply the edit on top of its newest revision and send it with that revision as the base.',
  },
  asset_expired: {
    meaning:
      'The record still exists but its image bytes were deleted: results are kept for 24 hours after a job ends.',
    retry: 'The bytes are gone for good.',
    fix: 'Run the job again from the original image, and download results within 24 hours.',
  },
  image_too_large: {
    meaning: 'The body or an image is over a limit: 50 MB per image or 25 megapixels, or 1 MiB for a JSON body.',
    retry: 'The same image or body is refused again.',
    fix: 'Downscale or recompress the image below the limits and send it again; split a JSON body that large (a revision of many long strokes into several revisions).',
  },
  unsupported_media: {
    meaning:
      'The body or an image is not of a supported type: images must be JPEG, PNG, WebP, AVIF, HEIC or HEIF, and bodies multipart/form-data or JSON as the operation says.',
    retry: 'The same body is refused again.',
    fix: 'Convert the image to a supported format, or send the content type the operation lists.',
  },
  unsafe_url: {
    meaning:
      'A remote URL (an image source or a webhook endpoint) was refused because it resolves to a private, loopback or otherwise prohibited address.',
    retry: 'The same URL is refused again.',
    fix: 'Use a public http(s) URL, or upload the image instead.',
  },
  authorization_pending: {
    meaning: 'The device sign-in is waiting for the user to approve it at `/device`.',
    retry: 'Poll again after the interval the device flow gave.',
    fix: 'Nothing to fix: approve the code on the device page, then the next poll succeeds.',
  },
  rate_limit_exceeded: {
    meaning:
      'Too many requests in the current window for this workspace, device or address, or the anonymous daily allowance is used up.',
    retry: 'Send it again after the seconds in `Retry-After`.',
    fix: 'Slow down: spread requests out, use a batch for many images, or sign in instead of working anonymously.',
  },
  processing_failed: {
    meaning: 'The processor could not finish this request. Any credit held for it was released.',
    retry:
      'An unexpected fault says `retryable: true` and may pass on a retry with backoff; otherwise the same input fails again.',
    fix: 'If it persists for one image, try another format or size, and report the `requestId`.',
  },
  processor_unavailable: {
    meaning: 'No healthy processing capacity is available right now. Nothing was charged.',
    retry: 'Send it again after `Retry-After`, with backoff and jitter.',
    fix: 'Nothing in the request: wait and retry.',
  },
}

/** The hyphenated code of a problem's `type` and of its page's path (`asset_expired` → `asset-expired`). */
export const errorSlug = (code: ErrorCode): string => code.replaceAll('_', '-')
