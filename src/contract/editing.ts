/**
 * @module
 * Editing (SPEC.md §2 Recipe, strokes and refinements; DESIGN.md §3 rows Stroke tools, Box
 * refinement, Exports): the request fields users send, and the options parts the edge sends the
 * inference server's editing routes (`/v1/revise`, `/v1/refine`, `/v1/export`). Every coordinate
 * and size is normalised to the source image (0–1), so the same edit rasterises to the same mask
 * bytes at the source's own resolution.
 */
import { z } from 'zod'
import { MAX_PIXELS } from './limits.js'

export const STROKE_TOOLS = ['restore', 'erase'] as const
export const POINT_LABELS = ['foreground', 'background'] as const
export const EXPORT_FORMATS = ['png', 'webp', 'jpeg', 'zip', 'psd'] as const

export type StrokeTool = (typeof STROKE_TOOLS)[number]
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

/** How many strokes one revision may carry, and points one stroke. */
export const MAX_STROKES = 500
export const MAX_STROKE_POINTS = 10_000
/** How many labelled points one refinement may carry. */
export const MAX_REFINEMENT_POINTS = 50

/** The content type of each export format's bytes. */
export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  png: 'image/png',
  webp: 'image/webp',
  jpeg: 'image/jpeg',
  zip: 'application/zip',
  psd: 'image/vnd.adobe.photoshop',
}

const Unit = z.number().min(0).max(1)

/** `#RRGGBB` or `#RRGGBBAA`. */
export const HexColor = z.string().regex(/^#(?:[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$/, 'Expected #RRGGBB or #RRGGBBAA')

export const BackgroundSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('transparent') }),
  z.strictObject({ type: z.literal('color'), color: HexColor }),
])

/**
 * How a revision is rendered (SPEC.md §2, strict). `crop`: to the subject's tight box; `margin`:
 * source pixels around it; `width`/`height`: the result is fitted inside (contain, centred).
 */
export const RecipeSchema = z.strictObject({
  version: z.literal(1),
  background: BackgroundSchema.optional(),
  crop: z.boolean().optional(),
  margin: z.number().min(0).max(5000).optional(),
  width: z.int().min(1).max(10_000).optional(),
  height: z.int().min(1).max(10_000).optional(),
})

/**
 * A brush stroke. `points` are [x, y] in 0–1 of the source's width and height; `size` is the
 * brush diameter as a fraction of the source's longer side; `hardness` is the fraction of the
 * radius painted at full strength (the rest falls off to 0); `opacity` scales the whole stroke.
 */
export const StrokeSchema = z.strictObject({
  tool: z.enum(STROKE_TOOLS),
  points: z
    .array(z.tuple([Unit, Unit]))
    .min(1)
    .max(MAX_STROKE_POINTS),
  size: z.number().gt(0).max(1),
  hardness: Unit.default(1),
  opacity: Unit.default(1),
})

export const RefinementPointSchema = z.strictObject({
  x: Unit,
  y: Unit,
  label: z.enum(POINT_LABELS),
})

/** A region of the source, normalised; it must lie inside the image and have an area. */
export const BoxSchema = z
  .strictObject({ x: Unit, y: Unit, width: z.number().gt(0).max(1), height: z.number().gt(0).max(1) })
  .refine((b) => b.x + b.width <= 1 + 1e-9 && b.y + b.height <= 1 + 1e-9, {
    message: 'Expected the box to lie inside the image (x + width ≤ 1, y + height ≤ 1)',
  })

export type Recipe = z.infer<typeof RecipeSchema>
export type Stroke = z.infer<typeof StrokeSchema>
export type RefinementPoint = z.infer<typeof RefinementPointSchema>
export type Box = z.infer<typeof BoxSchema>

/** `POST /v1/revise`, part `options`; with part `mask` (the base: 8-bit grayscale PNG, or any PNG whose alpha is the mask). */
export const ReviseRequestSchema = z
  .strictObject({
    /** The source's size: the base mask is scaled to it first when it differs. */
    width: z.int().min(1),
    height: z.int().min(1),
    strokes: z.array(StrokeSchema).max(MAX_STROKES),
  })
  .refine((r) => r.width * r.height <= MAX_PIXELS, { message: `Expected at most ${MAX_PIXELS} pixels` })

/** `POST /v1/refine`, part `options`; with parts `image` (the source) and `mask` (the base revision's). */
export const RefineRequestSchema = z
  .strictObject({
    points: z.array(RefinementPointSchema).min(1).max(MAX_REFINEMENT_POINTS).optional(),
    box: BoxSchema.optional(),
  })
  .refine((r) => r.points !== undefined || r.box !== undefined, { message: 'Expected points, a box, or both' })

/** `POST /v1/export`, part `options`; with parts `image` (the source) and `mask` (the revision's). */
export const ExportRequestSchema = z.strictObject({
  format: z.enum(EXPORT_FORMATS),
  recipe: RecipeSchema,
})

export type ReviseRequest = z.infer<typeof ReviseRequestSchema>
export type RefineRequest = z.infer<typeof RefineRequestSchema>
export type ExportRequest = z.infer<typeof ExportRequestSchema>

/** Output names of the editing routes: the mask routes answer `mask`, export answers `result`. */
export const MASK_OUTPUT = 'mask'
export const RESULT_OUTPUT = 'result'
