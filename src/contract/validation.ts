/**
 * @module
 * The one wording of a field that fails its schema, shared by the edge (a problem's `detail` and
 * `field`, src/errors.ts) and the inference server (an `invalid_input` message,
 * inference-server/src/options.ts): both validate with the same schemas, so a caller reads the
 * same sentence for the same mistake wherever it was caught.
 */

/** What the wording needs of a zod issue. */
export interface SchemaIssue {
  code: string
  path: readonly PropertyKey[]
  message: string
  keys?: readonly string[]
}

/**
 * A path as a field name (`options.alpha.threshold`); undefined for the value itself. A key with
 * no name (`{"": 1}`) is written `""`, so the name still points somewhere.
 */
export function fieldOf(path: readonly PropertyKey[]): string | undefined {
  return path.length ? path.map((key) => (key === '' ? '""' : String(key))).join('.') : undefined
}

/**
 * The sentence and the field naming an issue. `path` defaults to the issue's own; the edge passes
 * one with the request's prefix (`options.`) or a header's written name. An unknown key names the
 * first one: objects are strict, and one is enough to act on.
 * @example describeIssue({ code: 'unrecognized_keys', path: ['alpha'], message: '', keys: ['threshold'] })
 * // { message: 'Unknown field alpha.threshold: options are strict', field: 'alpha.threshold' }
 */
export function describeIssue(
  issue: SchemaIssue,
  path: readonly PropertyKey[] = issue.path,
): { message: string; field?: string } {
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    const field = fieldOf([...path, issue.keys[0]]) as string
    return { message: `Unknown field ${field}: options are strict`, field }
  }
  const field = fieldOf(path)
  return { message: field ? `${issue.message} for ${field}` : issue.message, field }
}
