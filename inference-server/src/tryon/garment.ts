/**
 * The garment's own key points, read from its cut-out mask (no garment model exists offline):
 * the neckline, shoulders, armpits, sleeve ends, hem and, for trousers, the crotch and each leg's
 * hem. They assume a garment photographed flat or on a form, front on and upright, as product
 * photos are; a garment that is rotated or folded gets points that are not where they should be.
 */
import { InferenceError } from '../errors.js'
import type { Mask, RgbImage } from '../imaging/types.js'
import type { Point } from './tps.js'

export interface GarmentPoints {
  box: { x0: number; y0: number; x1: number; y1: number }
  neck: Point
  /** Left and right are the image's (smaller x first), not the wearer's. */
  shoulders: [Point, Point]
  /** Absent for a garment without sleeves (its widest part is its body). */
  sleeves?: [Point, Point]
  armpits?: [Point, Point]
  hem: [Point, Point]
  hemCenter: Point
  /** Trousers: the top of the gap between the legs, and each leg's hem centre. */
  crotch?: Point
  legHems?: [Point, Point]
}

/** Mask values at or over this are the garment. */
const SOLID = 128
/** A border whose pixels stray less than this (mean, 8-bit) from their median is a plain background. */
const PLAIN_BORDER = 12
/** On a plain background, a pixel this far (largest channel difference) from it is the garment's. */
const KEY_DISTANCE = 40

/** The median colour of the image's outermost pixels and their mean deviation from it. */
function borderColour(image: RgbImage): { colour: number[]; spread: number } {
  const { width, height, data } = image
  const samples: number[] = []
  for (let x = 0; x < width; x++) samples.push(x, (height - 1) * width + x)
  for (let y = 1; y < height - 1; y++) samples.push(y * width, y * width + width - 1)
  const colour = [0, 1, 2].map((c) => {
    const values = samples.map((i) => data[i * 3 + c]).sort((a, b) => a - b)
    return values[values.length >> 1]
  })
  let spread = 0
  for (const i of samples) spread += Math.max(...colour.map((v, c) => Math.abs(data[i * 3 + c] - v)))
  return { colour, spread: spread / samples.length }
}

/**
 * The segmentation model's mask made whole. Salient-object models take bold prints for
 * background (ISNet drops the dark bands of a striped shirt), so on a plain background the
 * pixels unlike it are added, and holes not open to the image's border are filled.
 * @example const mask = garmentMask(image, await segmenter.segment(image))
 */
export function garmentMask(image: RgbImage, model: Mask): Mask {
  const data = Uint8Array.from(model.data)
  const { colour, spread } = borderColour(image)
  if (spread < PLAIN_BORDER) {
    for (let i = 0; i < data.length; i++) {
      const far = Math.max(...colour.map((v, c) => Math.abs(image.data[i * 3 + c] - v)))
      if (far >= KEY_DISTANCE) data[i] = 255
    }
  }
  fillHoles({ data, width: model.width, height: model.height })
  return { data, width: model.width, height: model.height }
}

/** Sets every background pixel not reachable from the border (through background) to solid. */
function fillHoles(mask: Mask): void {
  const { width, height, data } = mask
  const outside = new Uint8Array(width * height)
  const stack: number[] = []
  const visit = (i: number) => {
    if (outside[i] || data[i] >= SOLID) return
    outside[i] = 1
    stack.push(i)
  }
  for (let x = 0; x < width; x++) {
    visit(x)
    visit((height - 1) * width + x)
  }
  for (let y = 0; y < height; y++) {
    visit(y * width)
    visit(y * width + width - 1)
  }
  while (stack.length) {
    const i = stack.pop() as number
    const x = i % width
    if (x > 0) visit(i - 1)
    if (x < width - 1) visit(i + 1)
    if (i >= width) visit(i - width)
    if (i < (height - 1) * width) visit(i + width)
  }
  for (let i = 0; i < data.length; i++) if (!outside[i] && data[i] < SOLID) data[i] = 255
}

/** The first and last solid row of column x (−1 when none). */
function columnSpan(mask: Mask, x: number, y0: number, y1: number): [number, number] {
  let top = -1
  let bottom = -1
  for (let y = y0; y <= y1; y++) {
    if (mask.data[y * mask.width + x] < SOLID) continue
    if (top < 0) top = y
    bottom = y
  }
  return [top, bottom]
}

/** The first and last solid column of row y (−1 when none). */
function rowSpan(mask: Mask, y: number, x0: number, x1: number): [number, number] {
  let left = -1
  let right = -1
  for (let x = x0; x <= x1; x++) {
    if (mask.data[y * mask.width + x] < SOLID) continue
    if (left < 0) left = x
    right = x
  }
  return [left, right]
}

/** The bounding box of the solid pixels, ignoring rows and columns with almost none (specks). */
function solidBox(mask: Mask): GarmentPoints['box'] {
  const { width, height, data } = mask
  const rows = new Uint32Array(height)
  const cols = new Uint32Array(width)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (data[y * width + x] < SOLID) continue
      rows[y]++
      cols[x]++
    }
  }
  const minRow = Math.max(2, width * 0.01)
  const minCol = Math.max(2, height * 0.01)
  const y0 = rows.findIndex((c) => c >= minRow)
  const x0 = cols.findIndex((c) => c >= minCol)
  if (y0 < 0 || x0 < 0) throw new InferenceError('invalid_input', 'garment: no garment was found in the image')
  return { x0, y0, x1: cols.findLastIndex((c) => c >= minCol), y1: rows.findLastIndex((c) => c >= minRow) }
}

/** The mean y of the solid pixels of columns [xa, xb]: a sleeve's end, seen from the side. */
function meanY(mask: Mask, xa: number, xb: number, y0: number, y1: number): number {
  let sum = 0
  let count = 0
  for (let x = xa; x <= xb; x++) {
    for (let y = y0; y <= y1; y++) {
      if (mask.data[y * mask.width + x] < SOLID) continue
      sum += y
      count++
    }
  }
  return count ? sum / count : (y0 + y1) / 2
}

/**
 * @throws {InferenceError} `invalid_input` naming the garment image when its mask is empty or tiny
 * @example const points = garmentPoints(mask)
 */
export function garmentPoints(mask: Mask): GarmentPoints {
  const box = solidBox(mask)
  const w = box.x1 - box.x0 + 1
  const h = box.y1 - box.y0 + 1
  if (w < 16 || h < 16) throw new InferenceError('invalid_input', `garment: the garment found is only ${w}×${h} px`)
  const cx = Math.round((box.x0 + box.x1) / 2)
  // The body's width: the solid span a little above the hem (below any sleeve).
  const bodyRow = Math.round(box.y1 - 0.1 * h)
  const [bodyL, bodyR] = rowSpan(mask, bodyRow, box.x0, box.x1)
  const hemRow = Math.round(box.y1 - 0.01 * h)
  const [hemL, hemR] = rowSpan(mask, hemRow, box.x0, box.x1)
  const neckTop = columnSpan(mask, cx, box.y0, box.y1)[0]
  const shoulderAt = (x: number): Point => ({ x, y: columnSpan(mask, x, box.y0, box.y1)[0] })
  const inset = Math.round(0.02 * w)
  const shoulders: [Point, Point] = [shoulderAt(bodyL + inset), shoulderAt(bodyR - inset)]
  const points: GarmentPoints = {
    box,
    neck: { x: cx, y: neckTop },
    shoulders,
    hem: [
      { x: hemL, y: hemRow },
      { x: hemR, y: hemRow },
    ],
    hemCenter: { x: cx, y: columnSpan(mask, cx, box.y0, box.y1)[1] },
  }
  // Sleeves: the garment reaches well past its body's sides.
  const reach = Math.round(0.03 * w)
  if (bodyL - box.x0 > 0.06 * w && box.x1 - bodyR > 0.06 * w) {
    const top = box.y0
    const mid = Math.round(box.y0 + 0.6 * h)
    points.sleeves = [
      { x: box.x0, y: meanY(mask, box.x0, box.x0 + reach, top, mid) },
      { x: box.x1, y: meanY(mask, box.x1 - reach, box.x1, top, mid) },
    ]
    const under = (x: number): Point => ({ x, y: columnSpan(mask, x, top, mid)[1] })
    points.armpits = [under(bodyL - inset), under(bodyR + inset)]
    points.armpits[0].x = bodyL
    points.armpits[1].x = bodyR
  }
  // Trousers: an empty stretch up the centre column from the hem.
  const [, centreBottom] = columnSpan(mask, cx, box.y0, box.y1)
  if (centreBottom >= 0 && box.y1 - centreBottom > 0.2 * h) {
    points.crotch = { x: cx, y: centreBottom }
    const legHem = (xa: number, xb: number): Point => {
      const [l, r] = rowSpan(mask, hemRow, xa, xb)
      return { x: (l + r) / 2, y: hemRow }
    }
    points.legHems = [legHem(box.x0, cx), legHem(cx, box.x1)]
  }
  return points
}
