/**
 * The `/v1/remove` query, validated into one options object at the boundary (like sharp's
 * constructor options). Unknown parameters are rejected, as SPEC.md's removal options are strict.
 */
import { InferenceError } from './errors.js'
import type { AlphaOptions } from './imaging/alpha.js'
import * as is from './is.js'

export const QUALITIES = ['fast', 'balanced', 'high'] as const
export const ALPHA_MODES = ['raw', 'binary'] as const
export const OUTPUTS = ['mask', 'cutout'] as const

export type Quality = (typeof QUALITIES)[number]
export type OutputKind = (typeof OUTPUTS)[number]

export interface RemoveOptions {
  quality: Quality
  alpha: AlphaOptions
  output: OutputKind
  /** Upper bound on the result's pixels: larger images are scaled down first (anonymous previews). */
  maxPixels?: number
}

const KNOWN = new Set(['quality', 'alpha', 'threshold', 'feather', 'output', 'maxPixels'])
const MAX_PIXELS_RANGE = [1024, 25_000_000] as const

const bad = (name: string, expected: string, actual: unknown): InferenceError =>
  new InferenceError('invalid_input', is.invalidParameterError(name, expected, actual))

/** Query values are strings; numbers must be plain decimals ("0.5", not "", "0x1" or "1e0"). */
function parseNumber(name: string, raw: string, min: number, max: number): number {
  const value = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN
  if (!is.number(value) || !is.inRange(value, min, max)) throw bad(name, `number between ${min} and ${max}`, raw)
  return value
}

function pick<T extends string>(query: URLSearchParams, name: string, list: readonly T[]): T {
  const raw = query.get(name)
  if (!is.inArray(raw, list)) throw bad(name, `one of ${list.join(', ')}`, raw ?? undefined)
  return raw
}

/**
 * Parses and validates the removal query.
 * @throws {InferenceError} `invalid_input` with a sharp-style message
 * @example parseRemoveOptions(new URLSearchParams('quality=balanced&alpha=raw&feather=0&output=mask'))
 */
export function parseRemoveOptions(query: URLSearchParams): RemoveOptions {
  for (const key of new Set(query.keys())) {
    if (!KNOWN.has(key)) throw new InferenceError('invalid_input', `Unknown parameter ${key}`)
    if (query.getAll(key).length > 1)
      throw new InferenceError(
        'invalid_input',
        `Expected one value for ${key} but received ${query.getAll(key).length}`,
      )
  }
  const quality = pick(query, 'quality', QUALITIES)
  const mode = pick(query, 'alpha', ALPHA_MODES)
  const output = pick(query, 'output', OUTPUTS)
  const featherRaw = query.get('feather')
  if (featherRaw === null) throw bad('feather', 'number between 0 and 4', undefined)
  const feather = parseNumber('feather', featherRaw, 0, 4)
  const thresholdRaw = query.get('threshold')
  const maxPixelsRaw = query.get('maxPixels')
  const budget =
    maxPixelsRaw === null ? {} : { maxPixels: Math.floor(parseNumber('maxPixels', maxPixelsRaw, ...MAX_PIXELS_RANGE)) }
  if (mode === 'raw') {
    if (thresholdRaw !== null)
      throw new InferenceError('invalid_input', `Expected no threshold for alpha raw but received ${thresholdRaw}`)
    return { quality, alpha: { mode, feather }, output, ...budget }
  }
  if (thresholdRaw === null) throw bad('threshold', 'number between 0 and 1', undefined)
  return {
    quality,
    alpha: { mode, threshold: parseNumber('threshold', thresholdRaw, 0, 1), feather },
    output,
    ...budget,
  }
}
