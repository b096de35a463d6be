/**
 * @module
 * The one rule of every multipart body (docs/decisions.md, Strict multipart): exactly the parts the
 * operation lists. Every multipart schema is made here, strict, so an unlisted part fails
 * validation (`unrecognized_keys`) and `validationHook` answers 400 naming it, before a handler
 * runs: nothing is stored, held or charged. The hook also refuses a url-encoded body on these
 * routes (zod-openapi lets one through wherever multipart is declared): 415.
 */
import { z } from '@hono/zod-openapi'

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

/** A file part (presence and type are checked by the handler, naming the part). */
export const filePart = (description: string) => z.any().openapi({ type: 'string', format: 'binary', description })

/** A part that may repeat, each a file, in order. */
export const filesPart = (description: string, minItems: number, maxItems: number) =>
  z.any().openapi({ type: 'array', items: { type: 'string', format: 'binary' }, minItems, maxItems, description })
