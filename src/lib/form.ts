/**
 * @module
 * A JSON document sent as a multipart text part (`options`), validated with the same strict
 * schema as the JSON body, errors naming `<field>.<path>`.
 */
import type { ZodType } from 'zod'
import { ApiError, issueToApiError } from '../errors'

export function parseJsonField<T>(raw: unknown, schema: ZodType<T>, field = 'options'): T {
  if (typeof raw !== 'string') throw new ApiError('invalid_input', `Expected ${field} as a JSON string`, { field })
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    throw new ApiError('invalid_input', `Expected ${field} to be valid JSON`, { field })
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw issueToApiError(parsed.error.issues[0], [field])
  return parsed.data
}
