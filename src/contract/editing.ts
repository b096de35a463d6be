/**
 * @module
 * Editing (SPEC.md §2 Recipe, strokes and refinements; DESIGN.md §3 rows Stroke tools, Box
 * refinement, Exports): the request fields users send, and the options parts the edge sends the
 * inference server's editing routes (`/v1/revise`, `/v1/refine`, `/v1/export`). Every coordinate
 * and size is normalised to the source image (0–1), so the same edit rasterises to the same mask
 * bytes at the source's own resolution.
 */
import { z } from 'zod'
import { MAX_PIXELS, MAX_REFINEMENT_POINTS, MAX_STROKE_POINTS, MAX_STROKES, REFINEMENTS_PER_PROJECT } from './limits.js'

export const STROKE_TOOLS = ['restore', 'erase'] as const
export const POINT_LABELS = ['foreground', 'background'] as const
export const EXPORT_FORMATS = ['png', 'webp', 'jpeg', 'zip', 'psd'] as const

export type StrokeTool = (typeof STROKE_TOOLS)[number]
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

// In limits.ts (no zod there), so the web page's editor can use them without bundling zod.
export { MAX_REFINEMENT_POINTS, MAX_STROKE_POINTS, MAX_STROKES, REFINEMENTS_PER_PROJECT } from './limits.js'

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
 * What the OpenAPI document says of an [x, y] pair besides its two `prefixItems`: exactly two, each
 * a coordinate. JSON Schema lets a tuple have more items unless told; linters (Spectral's
 * `array-items`) also want an `items` beside every array.
 */
const { $schema: _, ...unitJsonSchema } = z.toJSONSchema(Unit)
const PAIR_JSON_SCHEMA = { minItems: 2, maxItems: 2, items: unitJsonSchema }

/**
 * A brush stroke. `points` are [x, y] in 0–1 of the source's width and height; `size` is the
 * brush diameter as a fraction of the source's longer side; `hardness` is the fraction of the
 * radius painted at full strength (the rest falls off to 0); `opacity` scales the whole stroke.
 */
export const StrokeSchema = z.strictObject({
  tool: z.enum(STROKE_TOOLS),
  points: z
    .array(z.tuple([Unit, Unit]).meta(PAIR_JSON_SCHEMA))
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
    /**
     * The points of the project's earlier refinements that the refined revision descends from
     * (DESIGN.md §3 Refinement clicks): they still hold, as every click does in an interactive
     * segmentation tool. Sent by the Worker, oldest first; not part of the public API's body.
     */
    earlierPoints: z
      .array(RefinementPointSchema)
      .max(MAX_REFINEMENT_POINTS * REFINEMENTS_PER_PROJECT)
      .optional(),
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

/** A rendered export may grow past the photo (margins, an upscale): twice the largest photo at most. */
export const MAX_RENDER_PIXELS = 2 * MAX_PIXELS

export interface Size {
  width: number
  height: number
}

/** A rectangle of pixels: `x`, `y` its top left, `width`×`height` its size. */
export interface PixelRect extends Size {
  x: number
  y: number
}

/**
 * The part of the photo a recipe renders (DESIGN.md §3 Exports): the subject's box when `crop`
 * (the whole photo when not, or when `box` is null: no subject), grown by `margin` source pixels
 * (rounded) on every side. It is not clamped to the photo: beyond it the canvas shows background.
 * @example recipeRegion({ width: 512, height: 512 }, null, { version: 1, margin: 10 }) // { x: -10, y: -10, width: 532, height: 532 }
 */
export function recipeRegion(photo: Size, box: PixelRect | null, recipe: Recipe): PixelRect {
  const base = recipe.crop && box ? box : { x: 0, y: 0, ...photo }
  const m = Math.round(recipe.margin ?? 0)
  return { x: base.x - m, y: base.y - m, width: base.width + 2 * m, height: base.height + 2 * m }
}

/**
 * The canvas a region is rendered on: the region's size, or fitted inside `width`×`height`
 * (contain, centred, the rest background) when both are given, or scaled to the one given
 * keeping the region's aspect. `content` is where the region lands on it.
 */
export function fitRegion(region: Size, recipe: Recipe): Size & { content: PixelRect } {
  const { width: rw, height: rh } = region
  const { width, height } = recipe
  if (width !== undefined && height !== undefined) {
    const scale = Math.min(width / rw, height / rh)
    const cw = Math.min(width, Math.max(1, Math.round(rw * scale)))
    const ch = Math.min(height, Math.max(1, Math.round(rh * scale)))
    const content = { x: Math.floor((width - cw) / 2), y: Math.floor((height - ch) / 2), width: cw, height: ch }
    return { width, height, content }
  }
  const w = width ?? (height === undefined ? rw : Math.max(1, Math.round((rw * height) / rh)))
  const h = height ?? (width === undefined ? rh : Math.max(1, Math.round((rh * width) / rw)))
  return { width: w, height: h, content: { x: 0, y: 0, width: w, height: h } }
}

/**
 * The smallest canvas a recipe can make from a `photo`-sized source, whatever its mask: exact
 * without `crop`; with it the subject's box is known only once the mask is read, so every box
 * from 1×1 to the whole photo is considered (the canvas grows with each side of the box, so one
 * of the four extreme boxes gives the smallest). Over `MAX_RENDER_PIXELS`, the render cannot succeed.
 */
export function smallestCanvas(photo: Size, recipe: Recipe): Size {
  return extremeCanvases(photo, recipe).reduce((a, b) => (b.width * b.height < a.width * a.height ? b : a))
}

/**
 * The most pixels a recipe renders from a `photo`-sized source, whatever its mask: the largest of
 * the extreme canvases (`smallestCanvas` says why they bound every box), and never more than
 * `MAX_RENDER_PIXELS`, past which the render refuses. An export's inference deadline counts them.
 * @example largestCanvasPixels({ width: 512, height: 512 }, { version: 1, width: 7000 }) // 49_000_000
 */
export function largestCanvasPixels(photo: Size, recipe: Recipe): number {
  const pixels = extremeCanvases(photo, recipe).map((canvas) => canvas.width * canvas.height)
  return Math.min(MAX_RENDER_PIXELS, Math.max(...pixels))
}

/** The canvas without `crop`; with it, the canvases of the four extreme boxes (1 or the photo's side each way). */
function extremeCanvases(photo: Size, recipe: Recipe): Size[] {
  if (!recipe.crop) return [fitRegion(recipeRegion(photo, null, recipe), recipe)]
  const sides = (n: number) => [1, n]
  return sides(photo.width).flatMap((width) =>
    sides(photo.height).map((height) => fitRegion(recipeRegion(photo, { x: 0, y: 0, width, height }, recipe), recipe)),
  )
}

/**
 * Why a canvas cannot be rendered (the same words on both sides), or undefined when it can.
 * `atLeast`: the canvas is the smallest the recipe can make (`smallestCanvas` with `crop`).
 */
export function renderSizeProblem(canvas: Size, atLeast = false): string | undefined {
  if (canvas.width * canvas.height <= MAX_RENDER_PIXELS) return undefined
  const makes = `${atLeast ? 'at least ' : ''}${canvas.width}×${canvas.height}`
  return `Expected a rendered image of at most ${MAX_RENDER_PIXELS} pixels but the recipe makes ${makes}`
}

/** The recipe field that sizes the canvas: the size asked for, else the margin (a photo alone fits). */
export function sizingField(recipe: Recipe): 'recipe.width' | 'recipe.height' | 'recipe.margin' {
  if (recipe.width !== undefined) return 'recipe.width'
  if (recipe.height !== undefined) return 'recipe.height'
  return 'recipe.margin'
}

/** Output names of the editing routes: the mask routes answer `mask`, export answers `result`. */
export const MASK_OUTPUT = 'mask'
export const RESULT_OUTPUT = 'result'
