/**
 * Shared guards, in the manner of sharp's lib/is.mjs: tiny predicates plus one factory for
 * every bad-parameter message, so all of them read the same way:
 * "Expected number between 0 and 1 for threshold but received 2 of type number".
 */

export const defined = (val: unknown): boolean => typeof val !== 'undefined' && val !== null

export const string = (val: unknown): val is string => typeof val === 'string' && val.length > 0

export const number = (val: unknown): val is number => typeof val === 'number' && !Number.isNaN(val)

export const integer = (val: unknown): val is number => Number.isInteger(val)

export const inRange = (val: number, min: number, max: number): boolean => val >= min && val <= max

export const inArray = <T>(val: unknown, list: readonly T[]): val is T => list.includes(val as T)

/**
 * Builds the one error message shape for an invalid parameter.
 * @example invalidParameterError('threshold', 'number between 0 and 1', 2)
 * // "Expected number between 0 and 1 for threshold but received 2 of type number"
 */
export function invalidParameterError(name: string, expected: string, actual: unknown): string {
  return `Expected ${expected} for ${name} but received ${String(actual)} of type ${typeof actual}`
}
