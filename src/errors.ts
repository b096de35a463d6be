/**
 * @module
 * Every error leaves the API as `application/problem+json` (SPEC.md §7). The codes with their
 * statuses, titles and help are the table in ./error-codes (re-exported here); the problem shape
 * is defined here once; routes and services throw `ApiError`.
 */
import { z } from '@hono/zod-openapi'
import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { describeIssue, type SchemaIssue } from './contract/validation'
import type { AppEnv } from './env'
import { authChallenge } from './lib/bearer'
import { ERROR_STATUS, ERROR_TITLES, type ErrorCode, errorSlug, RETRYABLE_CODES } from './error-codes'
import { log } from './lib/log'

export {
  ERROR_HELP,
  ERROR_STATUS,
  ERROR_TITLES,
  type ErrorCode,
  errorSlug,
  RETRYABLE_CODES,
} from './error-codes'

export interface ApiErrorOptions {
  field?: string
  retryable?: boolean
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number
  cause?: unknown
}

export class ApiError extends HTTPException {
  readonly code: ErrorCode
  readonly field?: string
  readonly retryable: boolean
  readonly retryAfter?: number

  constructor(code: ErrorCode, detail: string, options: ApiErrorOptions = {}) {
    super(ERROR_STATUS[code], { message: detail, cause: options.cause })
    this.code = code
    this.field = options.field
    this.retryable = options.retryable ?? RETRYABLE_CODES.has(code)
    this.retryAfter = options.retryAfter
  }
}

export const ProblemSchema = z
  .object({
    type: z.string().url(),
    status: z.number().int(),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    title: z.string(),
    detail: z.string(),
    field: z.string().optional(),
    retryable: z.boolean(),
    requestId: z.string(),
  })
  .openapi('Problem', {
    example: {
      type: 'https://docs.cutout.dev/errors/invalid-input',
      status: 400,
      code: 'invalid_input',
      title: 'Invalid input',
      detail: 'Unknown field options.sharpen: options are strict',
      field: 'options.sharpen',
      retryable: false,
      requestId: 'req_5d0c7f3a-9b1e-4c2d-8a6f-3e4b5c6d7e8f',
    },
  })

export type Problem = z.infer<typeof ProblemSchema>

/**
 * Where the problem `type` URIs point: `DOCS_URL` when set, else this service's own origin, which
 * serves a page for every code at `/errors/<code>` (web/dist, built by scripts/build-web.ts), so a
 * `type` always resolves to something a person can read.
 */
export function docsBase(c: Context<AppEnv>): string {
  return (c.env?.DOCS_URL || new URL(c.req.url).origin).replace(/\/$/, '')
}

/** The problem an `ApiError` is, as every answer carries it (the REST body, an MCP tool error). */
export function problemOf(c: Context<AppEnv>, err: ApiError): Problem {
  return {
    type: `${docsBase(c)}/errors/${errorSlug(err.code)}`,
    status: err.status,
    code: err.code,
    title: ERROR_TITLES[err.code],
    detail: err.message,
    ...(err.field ? { field: err.field } : {}),
    retryable: err.retryable,
    requestId: c.get('requestId') ?? '',
  }
}

export function problemResponse(c: Context<AppEnv>, err: ApiError): Response {
  const body = problemOf(c, err)
  const headers = new Headers({ 'content-type': 'application/problem+json' })
  if (err.retryAfter !== undefined) headers.set('retry-after', String(Math.ceil(err.retryAfter)))
  // Every 401 passes here, whoever refused the credential, so every 401 carries its challenge.
  if (err.status === 401) headers.set('www-authenticate', authChallenge(c.req.header('authorization')))
  return new Response(JSON.stringify(body), { status: err.status, headers })
}

/**
 * A header named the way it is written (`Idempotency-Key`), whatever its case on the wire: headers
 * reach the validator lower-cased, and a problem's `field` should name one header one way.
 */
export const headerName = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash, ch) => dash + ch.toUpperCase())

/**
 * Words a zod issue as the inference server does (src/contract/validation.ts): what was expected,
 * and where. A multipart form's unknown key is a part, not a field, and says so.
 */
export function issueToApiError(issue: SchemaIssue, prefix: PropertyKey[] = [], target?: string): ApiError {
  const path = target === 'header' ? issue.path.map((p) => headerName(String(p))) : [...prefix, ...issue.path]
  const { message, field } = describeIssue(issue, path)
  if (target === 'form' && issue.code === 'unrecognized_keys' && field) {
    const detail = `Unknown multipart part ${field}: only the parts this operation lists are accepted`
    return new ApiError('invalid_input', detail, { field })
  }
  return new ApiError('invalid_input', message, { field })
}

/** The `defaultHook` of every OpenAPIHono router: the first zod issue becomes a 400 problem. */
export function validationHook(
  result: { success: boolean; error?: { issues: SchemaIssue[] }; target?: string },
  c: Context<AppEnv>,
) {
  // zod-openapi lets a url-encoded body through wherever multipart is declared; only multipart is.
  if (result.target === 'form' && !/^multipart\/form-data/i.test(c.req.header('content-type') ?? '')) {
    throw new ApiError(
      'unsupported_media',
      'Expected a multipart/form-data body (or JSON where the operation takes it)',
    )
  }
  if (result.success || !result.error) return
  const issue = result.error.issues[0]
  throw issueToApiError(issue, [], result.target)
}

export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) return problemResponse(c, err)
  if (err instanceof HTTPException) {
    const code: ErrorCode =
      err.status === 415 ? 'unsupported_media' : err.status === 413 ? 'request_too_large' : 'invalid_input'
    return problemResponse(c, new ApiError(code, err.message || ERROR_TITLES[code]))
  }
  if (err instanceof SyntaxError) {
    return problemResponse(c, new ApiError('invalid_input', `Malformed body: ${err.message}`))
  }
  log('error', 'unexpected error', { requestId: c.get('requestId'), traceId: c.get('traceId'), error: String(err) })
  return problemResponse(c, new ApiError('processing_failed', 'An unexpected error occurred', { retryable: true }))
}

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  problemResponse(c, new ApiError('route_not_found', `No route for ${c.req.method} ${c.req.path}`))

/**
 * The app's not-found handler: a path some route answers, asked with another method, is 405
 * `method_not_allowed` with `Allow` listing that path's methods (RFC 9110 §15.5.6); a path no
 * route knows stays 404. `allowed` comes from the registered routes (`allowedMethods`).
 */
export const notFoundOrNotAllowed =
  (allowed: (path: string) => string[]): NotFoundHandler<AppEnv> =>
  (c) => {
    const methods = allowed(c.req.path)
    if (!methods.length) return notFound(c)
    const res = problemResponse(
      c,
      new ApiError(
        'method_not_allowed',
        `Expected ${methods.join(', ')} for ${c.req.path} but received ${c.req.method}`,
      ),
    )
    res.headers.set('allow', methods.join(', '))
    return res
  }

/**
 * A problem answer in a route's `responses`. Each operation lists the problems it can answer, not
 * SPEC.md §7's twelve everywhere: those its declaration implies are added by
 * src/schemas/problems.ts, the rest its route lists with this.
 */
export const problemContent = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
})
