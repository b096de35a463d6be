/**
 * @module
 * How a client may repeat each operation after a lost connection or a 5xx, said in /openapi.json
 * as `x-cutout-retry` on every operation so that clients read it instead of keeping route lists
 * (the SDK's and the Python client's generated tables; test/clients/generated.test.ts):
 * - `idempotency-key`: send an `Idempotency-Key` (one per logical call) and repeat with the same
 *   key; the API replays the first answer (SPEC.md §4). An operation has it when it declares the
 *   header, so the rule is the declaration's, not a second list.
 * - `safe`: repeat as it is (GET, HEAD, PUT, DELETE; a POST marked so by its route, such as an
 *   upload's completion, which answers a ready upload as it is).
 * - `once`: send once; what failed goes back to the caller.
 */

export const RETRY_EXTENSION = 'x-cutout-retry'
export type RetryRule = 'idempotency-key' | 'safe' | 'once'

const SAFE_METHODS = new Set(['get', 'head', 'put', 'delete', 'options'])

interface Operation {
  parameters?: { name: string; in: string }[]
  [RETRY_EXTENSION]?: RetryRule
}

/** An operation's rule: its route's own mark, else by its method and whether it takes `Idempotency-Key`. */
export function retryRuleOf(method: string, operation: Operation): RetryRule {
  const marked = operation[RETRY_EXTENSION]
  if (marked) return marked
  if (SAFE_METHODS.has(method.toLowerCase())) return 'safe'
  const takesKey = (operation.parameters ?? []).some(
    (p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
  )
  return takesKey ? 'idempotency-key' : 'once'
}

/** The document with every operation's rule written out (`/openapi.json` as served). */
export function withRetryRules<D extends { paths?: object }>(doc: D): D {
  for (const operations of Object.values(doc.paths ?? {}) as Record<string, unknown>[]) {
    for (const [method, operation] of Object.entries(operations)) {
      const op = operation as Operation
      op[RETRY_EXTENSION] = retryRuleOf(method, op)
    }
  }
  return doc
}
