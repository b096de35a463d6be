/**
 * Where the garment goes on the body (DESIGN.md §3 Virtual try-on): pairs of points, one on the
 * photo from the landmarks and one on the garment from its mask, for the thin-plate spline, and
 * the region they span. upper_body: shoulders to hips; lower_body: waist to ankles; dress:
 * shoulders to the knees or below. BlazePose's shoulders and hips are joint centres, so the
 * garment's seams go a little outside and above them. Left and right here are the image's.
 */
import type { TryOnCategory } from '../../../src/contract/tryon.js'
import type { GarmentPoints } from './garment.js'
import type { Landmark, LandmarkName, Pose } from './pose.js'
import type { Point } from './tps.js'

export interface Placement {
  /** Photo points and the garment points they receive, index for index. */
  body: Point[]
  garment: Point[]
  /** [x0, y0, x1, y1] in the photo, clipped to it. */
  region: [number, number, number, number]
  /** The landmarks the placement used (for the `landmarks` output). */
  used: LandmarkName[]
  /** A landmark the category needs is outside the photo or barely seen. */
  partial: boolean
}

/** Landmarks below this score count as not seen. */
const SEEN = 0.5

const mid = (a: Point, b: Point): Point => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 })
const add = (a: Point, dx: number, dy: number): Point => ({ x: a.x + dx, y: a.y + dy })
const dist = (a: Point, b: Point) => Math.hypot(a.x - b.x, a.y - b.y)

/** A pair of landmarks as [image-left, image-right]. */
function pair(pose: Pose, a: LandmarkName, b: LandmarkName): [Landmark, Landmark] {
  const p = pose.points[a]
  const q = pose.points[b]
  return p.x <= q.x ? [p, q] : [q, p]
}

/** The garment's end of a limb: from the body's `start` along `toward` (or the garment's own direction when unseen). */
function alongLimb(start: Point, toward: Landmark, garmentFrom: Point, garmentTo: Point, scale: number): Point {
  const length = dist(garmentFrom, garmentTo) * scale
  const dx = toward.score >= SEEN ? toward.x - start.x : garmentTo.x - garmentFrom.x
  const dy = toward.score >= SEEN ? toward.y - start.y : garmentTo.y - garmentFrom.y
  const norm = Math.hypot(dx, dy) || 1
  return { x: start.x + (dx / norm) * length, y: start.y + (dy / norm) * length }
}

function upperBody(pose: Pose, g: GarmentPoints, reachKnees: boolean): Omit<Placement, 'region' | 'partial'> {
  const [sL, sR] = pair(pose, 'leftShoulder', 'rightShoulder')
  const [hL, hR] = pair(pose, 'leftHip', 'rightHip')
  const sw = Math.max(1, sR.x - sL.x)
  const shoulderL = add(sL, -0.08 * sw, -0.06 * sw)
  const shoulderR = add(sR, 0.08 * sw, -0.06 * sw)
  // Garment pixels to photo pixels, from the shoulder seams.
  const scale = dist(shoulderL, shoulderR) / Math.max(1, dist(g.shoulders[0], g.shoulders[1]))
  const gShoulders = mid(g.shoulders[0], g.shoulders[1])
  const seams = mid(shoulderL, shoulderR)
  const body: Point[] = [shoulderL, shoulderR, add(seams, 0, (g.neck.y - gShoulders.y) * scale)]
  const garment: Point[] = [g.shoulders[0], g.shoulders[1], g.neck]
  const used: LandmarkName[] = ['leftShoulder', 'rightShoulder', 'leftHip', 'rightHip']
  const [sideL, sideR] = bodySides(pose, hL, hR, sw)
  let hemL: Point = { x: sideL, y: hL.y }
  let hemR: Point = { x: sideR, y: hR.y }
  if (reachKnees) {
    // A dress: its own length from the shoulders, at least to the knees.
    const [kL, kR] = pair(pose, 'leftKnee', 'rightKnee')
    used.push('leftKnee', 'rightKnee')
    const length = (g.hemCenter.y - gShoulders.y) * scale
    const hemY = Math.max(seams.y + length, (kL.y + kR.y) / 2)
    const half = (dist(g.hem[0], g.hem[1]) * scale) / 2
    const centre = mid(hL, hR).x
    hemL = { x: centre - half, y: hemY }
    hemR = { x: centre + half, y: hemY }
    body.push(add(hL, -0.1 * sw, 0), add(hR, 0.1 * sw, 0))
    garment.push(waistOf(g, 0), waistOf(g, 1))
  }
  body.push(hemL, hemR, mid(hemL, hemR))
  garment.push(g.hem[0], g.hem[1], g.hemCenter)
  if (g.sleeves && g.armpits) {
    const [eL, eR] = pair(pose, 'leftElbow', 'rightElbow')
    used.push('leftElbow', 'rightElbow')
    // The armpits on the torso's sides, a third of the way down: never on the arm, so a hanging
    // arm's sleeve and the body stay apart instead of folding into one another.
    const armpit = (s: Landmark, hip: Landmark, hem: Point, inward: number): Point => ({
      x: s.x + 0.35 * (hem.x - s.x) + inward * 0.05 * sw,
      y: s.y + 0.33 * (hip.y - s.y),
    })
    body.push(
      alongLimb(sL, eL, g.shoulders[0], g.sleeves[0], scale),
      alongLimb(sR, eR, g.shoulders[1], g.sleeves[1], scale),
      armpit(sL, hL, hemL, 1),
      armpit(sR, hR, hemR, -1),
    )
    garment.push(g.sleeves[0], g.sleeves[1], g.armpits[0], g.armpits[1])
  }
  return { body, garment, used }
}

/**
 * The body's sides at the hips: the person mask's run through the hips' midpoint on that row,
 * kept between 0.1 and 0.35 shoulder widths outside the hip joints (a loose sleeve or the
 * background's run would otherwise stretch the hem).
 */
function bodySides(pose: Pose, hL: Landmark, hR: Landmark, sw: number): [number, number] {
  const { mask } = pose
  const y = Math.round(Math.min(mask.height - 1, Math.max(0, (hL.y + hR.y) / 2)))
  const cx = Math.round(Math.min(mask.width - 1, Math.max(0, (hL.x + hR.x) / 2)))
  const solid = (x: number) => mask.data[y * mask.width + x] >= 128
  let left = cx
  let right = cx
  if (solid(cx)) {
    while (left > 0 && solid(left - 1)) left--
    while (right < mask.width - 1 && solid(right + 1)) right++
  }
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))
  return [clamp(left, hL.x - 0.35 * sw, hL.x - 0.1 * sw), clamp(right, hR.x + 0.1 * sw, hR.x + 0.35 * sw)]
}

/** The garment's sides halfway down its body (a dress's waist, roughly). */
function waistOf(g: GarmentPoints, side: 0 | 1): Point {
  return mid(g.shoulders[side], g.hem[side])
}

function lowerBody(pose: Pose, g: GarmentPoints): Omit<Placement, 'region' | 'partial'> {
  const [hL, hR] = pair(pose, 'leftHip', 'rightHip')
  const [kL, kR] = pair(pose, 'leftKnee', 'rightKnee')
  const [aL, aR] = pair(pose, 'leftAnkle', 'rightAnkle')
  const hw = Math.max(1, hR.x - hL.x)
  const thigh = Math.max(1, (dist(hL, kL) + dist(hR, kR)) / 2)
  // The waistband sits above the hip joints and outside them.
  const waistL = add(hL, -0.35 * hw, -0.25 * thigh)
  const waistR = add(hR, 0.35 * hw, -0.25 * thigh)
  const scale = dist(waistL, waistR) / Math.max(1, dist(g.shoulders[0], g.shoulders[1]))
  const body: Point[] = [waistL, waistR, mid(waistL, waistR)]
  const garment: Point[] = [g.shoulders[0], g.shoulders[1], g.neck]
  const used: LandmarkName[] = ['leftHip', 'rightHip', 'leftKnee', 'rightKnee', 'leftAnkle', 'rightAnkle']
  if (g.crotch && g.legHems) {
    const half = (dist(g.hem[0], g.legHems[0]) * scale) / 1
    body.push(add(mid(hL, hR), 0, 0.25 * thigh), aL, aR, add(aL, -half, 0), add(aR, half, 0), kL, kR)
    garment.push(
      g.crotch,
      g.legHems[0],
      g.legHems[1],
      g.hem[0],
      g.hem[1],
      mid(mid(g.shoulders[0], g.crotch), g.legHems[0]),
      mid(mid(g.shoulders[1], g.crotch), g.legHems[1]),
    )
  } else {
    // A skirt: its own length down from the waist.
    const length = (g.hemCenter.y - g.neck.y) * scale
    const half = (dist(g.hem[0], g.hem[1]) * scale) / 2
    const centre = mid(waistL, waistR)
    body.push({ x: centre.x - half, y: centre.y + length }, { x: centre.x + half, y: centre.y + length })
    body.push({ x: centre.x, y: centre.y + length })
    garment.push(g.hem[0], g.hem[1], g.hemCenter)
  }
  return { body, garment, used }
}

/**
 * @example const placement = placeGarment(pose, garmentPoints(mask), 'upper_body', image)
 */
export function placeGarment(
  pose: Pose,
  g: GarmentPoints,
  category: TryOnCategory,
  size: { width: number; height: number },
): Placement {
  const base = category === 'lower_body' ? lowerBody(pose, g) : upperBody(pose, g, category === 'dress')
  const xs = base.body.map((p) => p.x)
  const ys = base.body.map((p) => p.y)
  const clamp = (v: number, hi: number) => Math.min(hi, Math.max(0, Math.round(v)))
  const region: Placement['region'] = [
    clamp(Math.min(...xs), size.width),
    clamp(Math.min(...ys), size.height),
    clamp(Math.max(...xs), size.width),
    clamp(Math.max(...ys), size.height),
  ]
  // Elbows only steer the sleeves: the region is shoulders, hips, knees and ankles.
  const partial = base.used
    .filter((name) => !name.endsWith('Elbow'))
    .some((name) => {
      const p = pose.points[name]
      return p.score < SEEN || p.x < 0 || p.y < 0 || p.x >= size.width || p.y >= size.height
    })
  return { ...base, region, partial }
}
