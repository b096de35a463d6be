/**
 * @module
 * Virtual try-on (SPEC.md §2 Virtual try-on options; DESIGN.md §3 Virtual try-on): the strict
 * options users send, and the inference server's `POST /v1/try-on` (parts `options`, `person`,
 * `garment`; outputs `result`, a PNG at the person photo's size, and `landmarks`, JSON of the
 * body points the model used, kept for inspection).
 */
import { z } from 'zod'
import { MAX_SEED } from './catalog.js'

export const TRYON_CATEGORIES = ['upper_body', 'lower_body', 'dress'] as const
export type TryOnCategory = (typeof TRYON_CATEGORIES)[number]

export const TryOnOptionsSchema = z.strictObject({
  category: z.enum(TRYON_CATEGORIES),
  seed: z.int().min(0).max(MAX_SEED).optional(),
})

export type TryOnOptions = z.infer<typeof TryOnOptionsSchema>

/** `POST /v1/try-on`, part `options`: the seed is always set (the edge picks one when none was given). */
export const TryOnRequestSchema = TryOnOptionsSchema.extend({ seed: z.int().min(0).max(MAX_SEED) })
export type TryOnRequest = z.infer<typeof TryOnRequestSchema>

/** Notices on a try-on result (Job.warnings). */
export { TRYON_WARNINGS } from './tryon-warnings.js'

/** The `landmarks` output: pixel coordinates in the person photo (after EXIF orientation). */
export interface TryOnLandmarks {
  width: number
  height: number
  /** BlazePose's named key points used, e.g. leftShoulder, rightHip. */
  points: Record<string, { x: number; y: number; score: number }>
  /** The region the garment was placed in: [x0, y0, x1, y1]. */
  region: [number, number, number, number]
}

export const LANDMARKS_OUTPUT = 'landmarks'
