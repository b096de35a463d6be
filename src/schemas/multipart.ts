/**
 * @module
 * The one rule of every multipart body (docs/decisions.md, Strict multipart): exactly the parts the
 * operation lists. Every multipart schema is made here, a strict object, and describes its body in
 * /openapi.json. The routes do not validate with it, which would read a 50 MB body whole
 * (docs/decisions.md, Streamed multipart bodies): `streamedMultipart` serves a route without
 * zod-openapi's form validator, and its handler reads the body as a stream (`readStreamedForm`)
 * with the parts `partsOf` reads from the same schema, so the document and the reader list the
 * same parts. The reader refuses an unlisted part with 400 naming it as soon as its headers
 * arrive (nothing is held or charged, nothing stays stored), and a url-encoded body with 415.
 */
import { type OpenAPIHono, type RouteConfig, z } from '@hono/zod-openapi'

/** Each file part's schema, with how many times it may come. */
const FILE_PARTS = new WeakMap<object, number>()

const fileSchema = <T extends object>(schema: T, max: number): T => {
  FILE_PARTS.set(schema, max)
  return schema
}

/**
 * A multipart request schema, registered in /openapi.json as `name`.
 * @param name the component name (`RemovalMultipart`)
 * @param parts each part's schema: `filePart()`, `filesPart()` or a string
 * @example multipartSchema('RemovalMultipart', { image: filePart('The photo'), options: z.string() })
 */
export function multipartSchema<T extends z.ZodRawShape>(name: string, parts: T) {
  return z.strictObject(parts).openapi(name, {
    description: 'multipart/form-data with exactly these parts; any other part is 400 naming it',
  })
}

/**
 * A file part's bytes, to the document: a binary string, as OpenAPI 3.0 and 3.1 generators both
 * read it (`Blob | File` in a TypeScript client). Its zod check only says "present", so that the
 * document lists a part that must come as `required`; the handler checks presence and type
 * itself, naming the part.
 */
const fileBytes = (description: string) =>
  z.custom<Blob>((value) => value !== undefined).openapi({ type: 'string', format: 'binary', description })

/** A file part (`optional` when the operation can do without it). */
export const filePart = (description: string, { optional = false } = {}) =>
  fileSchema(optional ? fileBytes(description).optional() : fileBytes(description), 1)

/**
 * A part that may repeat, each a file, in order: to the document an array of binary strings,
 * which generated clients send as one part per item. Required when at least one must come.
 */
export const filesPart = (description: string, minItems: number, maxItems: number) => {
  const files = z
    .custom<Blob[]>((value) => value !== undefined)
    .openapi({ type: 'array', items: { type: 'string', format: 'binary' }, minItems, maxItems, description })
  return fileSchema(minItems > 0 ? files : files.optional(), maxItems)
}

/**
 * How a multipart body's non-text parts are sent (the OpenAPI `encoding` object): a JSON part
 * (`options`) as `application/json`, so a generated client serialises the object it is given.
 */
export const jsonParts = (...names: string[]) =>
  Object.fromEntries(names.map((name) => [name, { contentType: 'application/json' }]))

/** The parts a multipart schema lists: its text parts, and its file parts with how many may come. */
export function partsOf(schema: z.ZodObject): { texts: string[]; files: Record<string, number> } {
  const texts: string[] = []
  const files: Record<string, number> = {}
  for (const [name, part] of Object.entries(schema.shape)) {
    const max = FILE_PARTS.get(part)
    if (max === undefined) texts.push(name)
    else files[name] = max
  }
  return { texts, files }
}

/**
 * `route` as it is served: its multipart body is not validated by zod-openapi (which would parse
 * it whole) but read as a stream by the handler, and it is `hide`den because `route` itself is
 * what /openapi.json lists (register it with `registerPath`). A JSON body keeps its validator.
 */
export function streamedMultipart<R extends RouteConfig>(route: R): R {
  const body = route.request?.body
  if (!body) return route
  const content = Object.fromEntries(
    Object.entries(body.content).map(([type, media]) =>
      // A schema that is not zod is documentation only to zod-openapi: no validator is made for it.
      type === 'multipart/form-data' ? [type, { schema: { type: 'object' as const } }] : [type, media],
    ),
  )
  return { ...route, hide: true, request: { ...route.request, body: { ...body, content } } }
}

/** Lists `route` in `router`'s /openapi.json as declared, multipart schema and all (served by `streamedMultipart`). */
export function documentRoute<E extends object>(router: OpenAPIHono<E>, route: RouteConfig): void {
  const { middleware: _served, hide: _hidden, ...documented } = route
  router.openAPIRegistry.registerPath(documented)
}
