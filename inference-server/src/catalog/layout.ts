/**
 * Where each subject goes on the canvas (DESIGN.md §3 Catalog images). `hero`: the front view
 * alone, its box spanning SUBJECT_FILL (85 %) of the canvas's longer side, or less when that
 * would not fit the other way (then 85 % of that side), centred. `views`: every reference in one
 * row, front first and tallest (the others at 3/4 of its height), standing on one floor line, the
 * row spanning 85 % of the canvas's width (or the front 85 % of its height, whichever binds).
 * The seed moves the whole composition by a small whole-pixel offset, so another seed shifts
 * the product's pixels but never resamples them.
 */
import { SUBJECT_FILL } from '../../../src/contract/catalog.js'
import type { Rect } from '../render/crop.js'
import { between, type Random } from './random.js'

export interface Size {
  width: number
  height: number
}

/** Others' height as a share of the front's in `views`. */
export const VIEW_RATIO = 0.75
/** Space between views, as a share of the canvas width. */
const VIEW_GAP = 0.04
/** The seed's offset is at most this share of the canvas's longer side, each way. */
export const MAX_JITTER = 0.01

/** A seeded whole-pixel offset of the composition. */
export interface Jitter {
  dx: number
  dy: number
}

/** Draws the composition's offset from the seed. */
export function drawJitter(rand: Random, canvas: Size): Jitter {
  const reach = MAX_JITTER * Math.max(canvas.width, canvas.height)
  return { dx: Math.round(between(rand, -reach, reach)), dy: Math.round(between(rand, -reach, reach)) }
}

const scaled = (box: Size, scale: number): Size => ({
  width: Math.max(1, Math.round(box.width * scale)),
  height: Math.max(1, Math.round(box.height * scale)),
})

/** Keeps `start` so that `[start, start + length)` stays within `[0, limit)` where it can. */
const within = (start: number, length: number, limit: number) => Math.max(0, Math.min(limit - length, start))

/**
 * The front view's box on the canvas. `lift` raises it (px), leaving room for a floating shadow.
 * @example planHero({ width: 300, height: 400 }, { width: 1024, height: 1024 }, { dx: 0, dy: 0 }, 0)
 * // { x: 186, y: 77, width: 653, height: 870 }
 */
export function planHero(subject: Size, canvas: Size, jitter: Jitter, lift: number): Rect {
  const { width: W, height: H } = canvas
  const scale = Math.min(
    (SUBJECT_FILL * Math.max(W, H)) / Math.max(subject.width, subject.height),
    (SUBJECT_FILL * W) / subject.width,
    (SUBJECT_FILL * H) / subject.height,
  )
  const size = scaled(subject, scale)
  const x = within(Math.round((W - size.width) / 2) + jitter.dx, size.width, W)
  const y = within(Math.round((H - size.height) / 2) - lift + jitter.dy, size.height, H)
  return { x, y, ...size }
}

/** Every view's box on the canvas, in the references' order (front first, at the left). */
export function planViews(subjects: Size[], canvas: Size, jitter: Jitter, lift: number): Rect[] {
  const { width: W, height: H } = canvas
  const relative = subjects.map((_, i) => (i === 0 ? 1 : VIEW_RATIO))
  // Widths at a front height of 1: each box's aspect times its relative height.
  const unitWidth = subjects.reduce((sum, s, i) => sum + (s.width / s.height) * relative[i], 0)
  const gap = Math.round(VIEW_GAP * W)
  const front = Math.min(SUBJECT_FILL * H, (SUBJECT_FILL * W - gap * (subjects.length - 1)) / unitWidth)
  const sizes = subjects.map((s, i) => scaled(s, (front * relative[i]) / s.height))
  const row = sizes.reduce((sum, s) => sum + s.width, 0) + gap * (subjects.length - 1)
  const floor = Math.round((H + sizes[0].height) / 2) - lift + jitter.dy
  let x = within(Math.round((W - row) / 2) + jitter.dx, row, W)
  return sizes.map((size) => {
    const rect = { x, y: within(floor - size.height, size.height, H), ...size }
    x += size.width + gap
    return rect
  })
}
