/**
 * @module
 * The error answers of each operation, said in /openapi.json per operation (issue 46 item 5):
 * the statuses its declaration implies, plus those its route lists itself. A generated client then
 * types exactly what an operation can answer (`GET /v1/usage` has no 413), not SPEC.md §7's
 * twelve everywhere. What a declaration implies is what the shared machinery in front of every
 * route can answer for it:
 * - 400 `invalid_input`: it validates something (a parameter, a header or a body);
 * - 401 `invalid_api_key`: its `security` names a credential (an optional one is still refused when bad);
 * - 403 `insufficient_scope`: its row in the access table (services/access.ts) names scopes;
 * - 404 (`<resource>_not_found`): its path names a resource;
 * - 409 `idempotency_conflict`: it takes an `Idempotency-Key`;
 * - 413 `request_too_large` and 415 `unsupported_media`: it takes a body;
 * - 429 `rate_limit_exceeded`: the rate limiter counts it (all but the service documents);
 * - 500 `processing_failed`: any operation, on an unexpected fault.
 * Everything else (402, 410, 422, 428, 503, and a particular meaning of the above) a route lists
 * in its own `responses` with `problemContent`, where its handler's services can answer it.
 * test/worker/declared-statuses.ts holds every answer of the worker tests to this document.
 */
import type { RouteConfig } from '@hono/zod-openapi'
import { problemContent } from '../errors'
import { AUTH_REALM } from '../lib/bearer'
import { UNLIMITED_PATHS } from '../middleware/rate-limit'
import { accessOf } from './scopes'

type Responses = RouteConfig['responses']

const JSON_MEDIA = /^application\/(?:[\w.-]+\+)?json$/

/** 401 with the challenge every 401 carries (src/errors.ts `problemResponse`). */
export const unauthorized = (description: string) => ({
  ...problemContent(description),
  headers: {
    'WWW-Authenticate': {
      description: `The scheme to authenticate with: \`Bearer realm="${AUTH_REALM}"\`, plus \`error="invalid_token"\` when a bearer token was sent and refused`,
      schema: { type: 'string' as const },
    },
  },
})

/** The shape of a zod object (a route's params or headers), or none. */
const keysOf = (schema: unknown): string[] =>
  Object.keys((schema as { shape?: Record<string, unknown> } | undefined)?.shape ?? {})

/** The problems `route` can answer by its declaration alone, each with its generic meaning. */
export function impliedProblems(route: RouteConfig): Responses {
  const { request = {}, path } = route
  const body = request.body?.content
  const pathParams = keysOf(request.params)
  const headers = keysOf(request.headers)
  const access = accessOf(route)
  const implied: Responses = {}
  if (pathParams.length || request.query || headers.length || body) {
    implied[400] = problemContent('Invalid input: `field` names the first offending part')
  }
  if ((route.security ?? []).some((requirement) => Object.keys(requirement).length)) {
    implied[401] = unauthorized('Missing, invalid, expired or revoked credential')
  }
  if (access?.scopes.length) {
    implied[403] = problemContent(`The credential lacks a scope this needs (${access.scopes.join(', ')})`)
  }
  if (pathParams.length) {
    implied[404] = problemContent('Not found in this workspace; the code names what (`job_not_found`, …)')
  }
  if (headers.includes('idempotency-key')) {
    implied[409] = problemContent('The Idempotency-Key was used with a different request (`idempotency_conflict`)')
  }
  if (body) {
    const types = Object.keys(body)
    implied[413] = problemContent(
      types.some((type) => JSON_MEDIA.test(type))
        ? 'A JSON body over 1 MiB (`request_too_large`)'
        : 'The body is over its limit (`request_too_large`)',
    )
    implied[415] = problemContent(`Content-Type is not one of ${types.join(', ')} (\`unsupported_media\`)`)
  }
  if (!UNLIMITED_PATHS.has(path)) implied[429] = problemContent('Rate limit exceeded: retry after `Retry-After`')
  implied[500] = problemContent('An unexpected fault (`processing_failed`)')
  return implied
}

/**
 * `route` with its implied problems added to the responses it lists itself (its own description
 * of a status wins), in status order: what /openapi.json says of it.
 */
export function withProblems<R extends RouteConfig>(route: R): R {
  const responses = { ...impliedProblems(route), ...route.responses }
  return { ...route, responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))) }
}

/** 503 `processor_unavailable` of a route that needs the inference server now, saying for what. */
export const processorUnavailable = (what: string) =>
  problemContent(`No inference server can ${what} now (\`processor_unavailable\`); retry after \`Retry-After\``)
