/**
 * @module
 * Removal options (SPEC.md §2): the strict object the API accepts, and the request the edge sends
 * the inference server (the same options plus the edge's own pixel budget). The Worker adds the
 * OpenAPI metadata; both packages validate with these schemas.
 */
import { z } from 'zod'
import { DEFAULT_REMOVAL_OPTIONS } from './defaults.js'
import { MAX_PIXELS, MIN_MAX_PIXELS } from './limits.js'

export const QUALITIES = ['fast', 'balanced', 'high'] as const
export const OUTPUTS = ['mask', 'cutout'] as const
export const FEATHER_MAX = 4

export type Quality = (typeof QUALITIES)[number]
export type OutputKind = (typeof OUTPUTS)[number]

export { DEFAULT_REMOVAL_OPTIONS }

const Feather = z.number().min(0).max(FEATHER_MAX).default(DEFAULT_REMOVAL_OPTIONS.alpha.feather)

export const AlphaSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('raw'), feather: Feather }),
  z.strictObject({ mode: z.literal('binary'), threshold: z.number().min(0).max(1), feather: Feather }),
])

export const RemovalOptionsSchema = z.strictObject({
  quality: z.enum(QUALITIES).default(DEFAULT_REMOVAL_OPTIONS.quality),
  alpha: AlphaSchema.default(DEFAULT_REMOVAL_OPTIONS.alpha),
  output: z.enum(OUTPUTS).default(DEFAULT_REMOVAL_OPTIONS.output),
})

export type AlphaOptions = z.infer<typeof AlphaSchema>
export type RemovalOptions = z.infer<typeof RemovalOptionsSchema>

/** The `options` part of `POST /v1/remove`. */
export const RemoveRequestSchema = RemovalOptionsSchema.extend({
  /** Scale larger images down to at most this many pixels first (anonymous previews). */
  maxPixels: z.int().min(MIN_MAX_PIXELS).max(MAX_PIXELS).optional(),
})

export type RemoveRequest = z.infer<typeof RemoveRequestSchema>
