/**
 * The contact shadow, built from the placed subjects' masks (DESIGN.md §3 Catalog images): each
 * subject's silhouette is flattened onto the floor (its rows averaged down to a few percent of
 * its height), leaned sideways by the light's angle, set at the subject's base, blurred and
 * darkened by an opacity. The result is a darkness plane (0 = none, 255 = black) that is exactly
 * 0 wherever no shadow reaches, so the background stays exactly its colour there.
 * Styles: `soft` (a wide ambient shadow and a tight dark core), `hard` (a crisp cast shadow and a
 * core), `floating` (one wide faint shadow a gap below the lifted subject), `none`.
 * The seed varies the light's angle, the softness and the shadow's drop within fixed bounds.
 */
import type { CatalogShadow } from '../../../src/contract/catalog.js'
import { resizeMask } from '../imaging/mask-part.js'
import type { Rect } from '../render/crop.js'
import type { Size } from './layout.js'
import { between, type Random } from './random.js'

/** The seed's light: how far the shadow leans, how soft it is, how far below the base it sits. */
export interface Light {
  /** Radians; negative leans left. */
  angle: number
  /** Multiplies every blur. */
  softness: number
  /** Share of the canvas's longer side the shadow sits below the base. */
  drop: number
}

export const LIGHT_BOUNDS = {
  angle: [(-20 * Math.PI) / 180, (20 * Math.PI) / 180],
  softness: [0.8, 1.25],
  drop: [0.001, 0.004],
} as const

/** Draws the light from the seed. */
export function drawLight(rand: Random): Light {
  const { angle, softness, drop } = LIGHT_BOUNDS
  return {
    angle: between(rand, angle[0], angle[1]),
    softness: between(rand, softness[0], softness[1]),
    drop: between(rand, drop[0], drop[1]),
  }
}

/**
 * One shadow of a subject. `base`: the share of the subject's height, from its bottom, that casts
 * it (1: the whole silhouette; a little: only what stands on the floor, for a contact core that
 * follows the base's width). `squash`: the flattened height, as a share of that part's height.
 * `sigma` and `gap` are shares of the canvas.
 */
interface Layer {
  base: number
  squash: number
  /** Sideways lean per flattened row, times tan(angle). */
  lean: number
  sigma: number
  opacity: number
  gap?: number
}

const STYLES: Record<Exclude<CatalogShadow, 'none'>, Layer[]> = {
  soft: [
    { base: 1, squash: 0.1, lean: 1, sigma: 0.014, opacity: 0.28 },
    { base: 0.1, squash: 0.2, lean: 0.2, sigma: 0.003, opacity: 0.45 },
  ],
  hard: [
    { base: 1, squash: 0.16, lean: 3, sigma: 0.0012, opacity: 0.35 },
    { base: 0.1, squash: 0.2, lean: 0.2, sigma: 0.0012, opacity: 0.4 },
  ],
  floating: [{ base: 1, squash: 0.05, lean: 0.5, sigma: 0.014, opacity: 0.3, gap: 0.04 }],
}

/** Share of the canvas height a floating subject is raised, so subject and shadow stay centred. */
export const FLOAT_LIFT = 0.02

/** How far (px) the composition is raised for `style`. */
export const liftFor = (style: CatalogShadow, canvas: Size): number =>
  style === 'floating' ? Math.round(FLOAT_LIFT * canvas.height) : 0

/** A placed subject: where its box is on the canvas, and its alpha at that size. */
export interface Placed {
  rect: Rect
  alpha: Uint8Array
}

/** Three passes of a running box mean along rows (`step` 1) or columns (`step` = width). */
function boxPasses(plane: Float32Array, lines: number, length: number, step: number, stride: number, r: number): void {
  const line = new Float32Array(length)
  const norm = 1 / (2 * r + 1)
  for (let l = 0; l < lines; l++) {
    const base = l * stride
    for (let pass = 0; pass < 3; pass++) {
      for (let i = 0; i < length; i++) line[i] = plane[base + i * step]
      let sum = 0
      for (let i = 0; i < Math.min(r, length); i++) sum += line[i]
      for (let i = 0; i < length; i++) {
        if (i + r < length) sum += line[i + r]
        if (i - r - 1 >= 0) sum -= line[i - r - 1]
        plane[base + i * step] = sum * norm
      }
    }
  }
}

/** A Gaussian of `sigma` px approximated by three box means (radius from σ² = 3·((2r+1)² − 1)/12). */
function blur(plane: Float32Array, width: number, height: number, radius: number): void {
  if (radius < 1) return
  boxPasses(plane, height, width, 1, width, radius)
  boxPasses(plane, width, height, width, 1, radius)
}

const boxRadius = (sigma: number) => Math.round((Math.sqrt(4 * sigma * sigma + 1) - 1) / 2)

/** Multiplies one layer of one subject's shadow into `keep` (the share of light left, per pixel). */
function castLayer(keep: Float32Array, canvas: Size, placed: Placed, layer: Layer, light: Light): void {
  const { rect, alpha } = placed
  const L = Math.max(canvas.width, canvas.height)
  const part = Math.max(1, Math.round(rect.height * layer.base))
  const flat = resizeMask(
    { data: alpha.subarray((rect.height - part) * rect.width), width: rect.width, height: part },
    rect.width,
    Math.max(1, Math.round(part * layer.squash)),
  )
  const rows = flat.height
  const shear = Math.tan(light.angle) * layer.lean
  const reach = Math.ceil(Math.abs(shear) * rows)
  const r = boxRadius(layer.sigma * L * light.softness)
  const pad = 3 * r + 1
  // The region: the flattened silhouette, its lean either way, and the blur's reach.
  const left = rect.x - reach - pad
  const bottom = rect.y + rect.height + Math.round(light.drop * L) + Math.round((layer.gap ?? 0) * canvas.height)
  const top = bottom - rows - pad
  const width = rect.width + 2 * (reach + pad)
  const height = rows + 2 * pad
  const plane = new Float32Array(width * height)
  for (let row = 0; row < rows; row++) {
    // Higher rows of the silhouette stand further from the floor: they lean further.
    const shift = Math.round((rows - 1 - row) * shear)
    const at = (pad + row) * width + (rect.x + shift - left)
    for (let x = 0; x < rect.width; x++) plane[at + x] = flat.data[row * rect.width + x] / 255
  }
  blur(plane, width, height, r)
  for (let y = Math.max(0, -top); y < height && top + y < canvas.height; y++) {
    for (let x = Math.max(0, -left); x < width && left + x < canvas.width; x++) {
      const v = plane[y * width + x]
      if (v > 0) keep[(top + y) * canvas.width + left + x] *= 1 - layer.opacity * Math.min(1, v)
    }
  }
}

/**
 * The shadow's darkness plane for `style`, or null for `none`.
 * @example const shade = castShadow({ width: 1024, height: 1024 }, [{ rect, alpha }], 'soft', light)
 */
export function castShadow(canvas: Size, placed: Placed[], style: CatalogShadow, light: Light): Uint8Array | null {
  if (style === 'none') return null
  const keep = new Float32Array(canvas.width * canvas.height).fill(1)
  for (const subject of placed) for (const layer of STYLES[style]) castLayer(keep, canvas, subject, layer, light)
  const shade = new Uint8Array(keep.length)
  for (let i = 0; i < keep.length; i++) shade[i] = Math.round(255 * (1 - keep[i]))
  return shade
}
