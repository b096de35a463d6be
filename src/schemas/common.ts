import { z } from '@hono/zod-openapi'
import { SOURCE_FETCH_TIMEOUT_MS } from '../contract/limits'

/**
 * A resource id in a request (path parameter, body field, query filter). UUIDs are
 * case-insensitive (RFC 9562) and ids are stored lower-case, so an id is lower-cased here, once,
 * and every lookup finds `29D24688-…` as `29d24688-…`. The OpenAPI document is unchanged (the
 * overwrite is not a constraint). Response schemas need not use it: ids leave lower-case.
 */
export const Uuid = z.uuid().toLowerCase()

export const IdParams = z.object({
  id: Uuid.openapi({ param: { name: 'id', in: 'path' }, example: '0b7f1d1e-8c1a-4c2e-9d55-0f6c3c1c2f11' }),
})

/**
 * A `sourceUrl` (removals, try-on images): checked by the SSRF guard on every hop and fetched
 * within one time bound (SPEC.md §4 "Source URLs"; docs/decisions.md "A slow sourceUrl").
 */
export const SourceUrl = z.url({ protocol: /^https?$/ }).openapi({
  description: `A public http or https image URL. Private networks and metadata services are refused (422 unsafe_url); at most 5 redirects are followed; the whole fetch, redirects and body included, must finish within ${SOURCE_FETCH_TIMEOUT_MS / 1000} s (else 400 invalid_input naming this field).`,
  example: 'https://images.example.com/products/mug.jpg',
})

/**
 * The `Idempotency-Key` header. Optional to the validator either way: where SPEC.md requires it, a
 * missing key is our own 400 with field Idempotency-Key (services/idempotency.ts), not the
 * validator's. The document still says `required` there (`param.required` overrides what the
 * generator reads off `.optional()`), so a generated client asks for it.
 */
const idempotencyKey = (required: boolean) =>
  z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({
      param: { in: 'header', required },
      example: '5f2b8e4a-1c3d-4b6e-9a7f-0e1d2c3b4a59',
      description: `Idempotency-Key (${required ? 'required' : 'optional'}): the same key and input replays the first response for 24 hours.`,
    })

const prefer = z
  .string()
  .optional()
  .openapi({ param: { in: 'header' }, example: 'wait=8', description: 'wait=N waits up to N (capped at 8) seconds' })

export const IdempotencyHeaders = z.object({ 'idempotency-key': idempotencyKey(true), prefer })

/**
 * An optional `Idempotency-Key`: the routes SPEC.md does not require one on, which create all the
 * same (catalog images, projects and their edits, webhooks, API keys).
 */
export const OptionalIdempotencyHeaders = z.object({ 'idempotency-key': idempotencyKey(false) })

/** How a route with an optional `Idempotency-Key` describes its 409 `idempotency_conflict`. */
export const IDEMPOTENCY_CONFLICT =
  'the Idempotency-Key was used with a different request, or its first request is still running (idempotency_conflict)'

/** An optional `Idempotency-Key` and `Prefer: wait` (exports). */
export const OptionalIdempotencyPreferHeaders = OptionalIdempotencyHeaders.extend({ prefer })

/**
 * A JSON response. `example` is for a schema shared by responses that differ (the health checks);
 * most examples sit on the schema itself.
 */
export const json = <T extends z.ZodType>(schema: T, description: string, example?: z.output<T>) => ({
  description,
  content: { 'application/json': example === undefined ? { schema } : { schema, example } },
})

/**
 * "Exactly one of sourceUrl or uploadId", said to the document as a `oneOf` of the two members
 * (a body with both matches both branches, one with neither matches none). Document only: the
 * handler checks it (services/job-sources.ts `sourcesFromJson`) and names the member in its 400,
 * which a zod union would word differently.
 */
export const ONE_SOURCE = {
  description: 'Exactly one of sourceUrl or uploadId.',
  oneOf: [{ required: ['sourceUrl'] }, { required: ['uploadId'] }],
}

/** An API key or session, or none at all (anonymous-capable routes). */
export const optionalBearer: Record<string, string[]>[] = [{ Bearer: [] }, {}]

/**
 * A public operation (the service documents, sign-in, the device cookie): it reads no credential.
 * Said explicitly, as an empty list, so a reader or a linter (redocly's `security-defined`) does
 * not take a missing `security` for a forgotten one.
 */
export const noCredentials: Record<string, string[]>[] = []
