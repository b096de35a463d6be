/**
 * The `options` part of a job request, validated at the boundary against the shared contract's
 * schema (`src/contract/options.ts`), the same one the edge validates the API request with.
 */
import type { z } from 'zod'
import { type RemoveRequest, RemoveRequestSchema } from '../../src/contract/options.js'
import { describeIssue } from '../../src/contract/validation.js'
import { InferenceError } from './errors.js'

export { OUTPUTS, QUALITIES } from '../../src/contract/options.js'
export type { OutputKind, Quality } from '../../src/contract/options.js'

/** What `/v1/remove` runs with. */
export type RemoveOptions = RemoveRequest

/**
 * Parses a JSON options part with `schema`.
 * @throws {InferenceError} `invalid_input` naming the first bad field
 * @example parseOptions(RemoveRequestSchema, parts.get('options'))
 */
export function parseOptions<T extends z.ZodType>(schema: T, bytes: Uint8Array | undefined): z.infer<T> {
  if (!bytes) throw new InferenceError('invalid_input', 'Expected an options part')
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    throw new InferenceError('invalid_input', 'Expected the options part to be JSON')
  }
  const parsed = schema.safeParse(value)
  // Worded as the edge words it (src/contract/validation.ts).
  if (!parsed.success) throw new InferenceError('invalid_input', describeIssue(parsed.error.issues[0]).message)
  return parsed.data
}

/** Parses the options of `/v1/remove`. */
export const parseRemoveOptions = (bytes: Uint8Array | undefined): RemoveOptions =>
  parseOptions(RemoveRequestSchema, bytes)
