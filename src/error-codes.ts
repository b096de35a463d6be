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
  // One not-found code per resource (`notFound` below); `job_not_found` is SPEC.md's own.
  job_not_found: 404,
  upload_not_found: 404,
  batch_not_found: 404,
  project_not_found: 404,
  revision_not_found: 404,
  refinement_not_found: 404,
  export_not_found: 404,
  catalog_image_not_found: 404,
  webhook_endpoint_not_found: 404,
  webhook_delivery_not_found: 404,
  api_key_not_found: 404,
  device_authorization_not_found: 404,
  workspace_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  revision_conflict: 409,
  asset_expired: 410,
  image_too_large: 413,
  request_too_large: 413,
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
  job_not_found: 'Job not found',
  upload_not_found: 'Upload not found',
  batch_not_found: 'Batch not found',
  project_not_found: 'Project not found',
  revision_not_found: 'Revision not found',
  refinement_not_found: 'Refinement not found',
  export_not_found: 'Export not found',
  catalog_image_not_found: 'Catalog image not found',
  webhook_endpoint_not_found: 'Webhook endpoint not found',
  webhook_delivery_not_found: 'Webhook delivery not found',
  api_key_not_found: 'API key not found',
  device_authorization_not_found: 'Device authorization not found',
  workspace_not_found: 'Workspace not found',
  route_not_found: 'Route not found',
  method_not_allowed: 'Method not allowed',
  idempotency_conflict: 'Idempotency conflict',
  revision_conflict: 'Revision conflict',
  asset_expired: 'Asset expired',
  image_too_large: 'Image too large',
  request_too_large: 'Request too large',
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
 * The help of a `<resource>_not_found` code: each resource has its own code, as SPEC.md's
 * `job_not_found` has for jobs, so a request naming two (a delivery of an endpoint, a revision of a
 * project) says which one is missing; what they say differs only in the resource, where it is
 * looked for, and a remark of its own.
 */
function notFound(
  resource: string,
  { within = 'the authenticated workspace', also = '', fix }: { within?: string; also?: string; fix?: string } = {},
): { meaning: string; retry: string; fix: string } {
  return {
    meaning: `No ${resource} with this id exists in ${within}. One of another workspace is reported the same way, never as forbidden.${also}`,
    retry: `The same request finds no ${resource} again.`,
    fix: fix ?? `Check the id, and that the credential belongs to the workspace that owns the ${resource}.`,
  }
}

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
  job_not_found: notFound('job', {
    also: " A job's result asked for before the job succeeded is this code too (`detail` gives the job's status), and a caller with no credential gets 401 `invalid_api_key` for any job its anonymous device did not make.",
  }),
  upload_not_found: notFound('upload', {
    also: " An upload named in another request's body (`uploadId`, `uploadIds`) is 400 `invalid_input` naming that field instead.",
  }),
  batch_not_found: notFound('batch'),
  project_not_found: notFound('project'),
  revision_not_found: notFound('revision', { within: 'the project' }),
  refinement_not_found: notFound('refinement', { within: 'the project' }),
  export_not_found: notFound('export', {
    within: 'the project',
    also: ' Asking for its result before the export succeeded is this code too (`detail` gives its status).',
  }),
  catalog_image_not_found: notFound('catalog image'),
  webhook_endpoint_not_found: notFound('webhook endpoint', {
    also: ' A deleted endpoint is still found: its delivery history stays readable.',
  }),
  webhook_delivery_not_found: notFound('webhook delivery', {
    within: "the endpoint's deliveries",
    fix: 'Take the delivery id from `GET /v1/webhooks/{id}/deliveries` of the same endpoint.',
  }),
  api_key_not_found: notFound('API key', { also: ' A key already revoked is not found either.' }),
  device_authorization_not_found: {
    meaning:
      'No device sign-in is waiting for this user code: it was mistyped, or it expired (codes last ten minutes).',
    retry: 'The same code is not found again.',
    fix: 'Check the code the device shows, or start the sign-in again on the device (`cutout login`) for a fresh one.',
  },
  workspace_not_found: {
    meaning: 'The signed-in user is not a member of the workspace the request names.',
    retry: 'The same workspace is not found again.',
    fix: "Name one of the user's workspaces (`GET /v1/workspaces` lists them), or leave it out for the session's own.",
  },
  route_not_found: {
    meaning:
      'No operation answers this path, whatever the method (a path that exists with another method is 405 `method_not_allowed`).',
    retry: 'The same path is not found again.',
    fix: 'Check the path against the API reference at `/docs`, including the `/v1` prefix.',
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
    meaning:
      'An image is over a limit: 50 MB or 25 megapixels for an input, or an export whose output size the recipe puts over the limit. `field` names the image or the recipe field.',
    retry: 'The same image is refused again.',
    fix: 'Downscale or recompress the image below the limits and send it again, or ask for a smaller export.',
  },
  request_too_large: {
    meaning:
      'The request body is over its limit before any of it was read as input: a JSON body is at most 1 MiB (1,048,576 bytes). Images have their own limits (`image_too_large`).',
    retry: 'The same body is refused again.',
    fix: 'Send less in one request: split a revision of many long strokes into several revisions.',
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
