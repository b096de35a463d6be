/**
 * @module
 * Refinement by clicks (DESIGN.md §3 "Refinement clicks"): every labelled point of the project
 * (the earlier ones and the new ones) decides, with the base mask, the whole subject at once.
 *
 * Each pixel weighs the base mask's say (its log-odds, bounded, so a confident model is not
 * overturned by a click far away) against the clicks' say: a foreground click pulls towards
 * foreground, a background click away, each by how geodesically near the pixel is to it
 * (geodesic.ts: near along the same surface of the photo, far across its edges and the model's).
 * So a click on one leaf of a plant the model saw only faintly raises the leaves it is joined to by
 * colour, not a disc around the click, and a click on a background blob the model took in drops
 * that blob up to where it meets the subject. The decision is made at a working size (a tool
 * people click must answer at once); where it changes the base, the working size's soft result is
 * scaled back, and everywhere else the base's own pixels stay untouched. Every earlier click holds
 * because it takes part in every decision, and each click's own pixel ends on its side.
 */
import sharp from 'sharp'
import { resizeMask } from '../imaging/mask-part.js'
import type { Mask, RgbImage } from '../imaging/types.js'
import {
  type GeodesicCosts,
  type GeodesicField,
  type GeodesicWeights,
  geodesicCosts,
  geodesicDistance,
} from './geodesic.js'
import { honourPoints } from './points.js'
import type { PixelPoint } from './region.js'

export interface ClickSettings {
  /** The working size's longer side, in pixels (smaller photos are used as they are). */
  workSide: number
  /** The photo is blurred this much (Gaussian sigma, working pixels) before distances, so texture is not taken for edges. */
  smooth: number
  /** How far a click reaches: the geodesic distance (in the weights' units) where its pull falls to 1/e. */
  reach: number
  /** A click's pull at its own pixel, in log-odds (the base's say is bounded by `prior`). */
  strength: number
  /** The base mask's say is bounded to ± this, in log-odds. */
  prior: number
  /**
   * How far from the side it asks for a click may change the mask, in multiples of its own
   * clearance from that side (0: no limit).
   */
  band: number
  weights: GeodesicWeights
}

/**
 * Chosen for reasons before measuring (docs/quality.md "Refinement clicks"), but the working size:
 * 512 (a click in a third of a second) measured as good as the model's own 1024 (three times
 * slower, and no better where thin parts are missed), in both cross-validation folds; a click's pull (6) outweighs all but a confident base (bounded at
 * 4, a probability of 0.98), so it flips the uncertain and the wrong, and needs the photo's
 * agreement to flip what the model was sure of; a pull falls to 1/e after 20 units, where walking
 * the photo's longer side costs 12 (a uniform surface two thirds of the photo across is crossed
 * before the pull drops below a confident base's say), a full colour change 60 and a full change
 * of the model's mask 30, so an edge of either stops it; a blur of one working pixel keeps fine
 * texture from counting as edges; a click changes the mask up to three times its clearance from
 * the side it asks for (a click 4 px outside the edge moves the edge by up to 12 px along its whole
 * length, and leaves the like-coloured surface behind it alone), measured on ../shared/gt only to
 * check what it costs (docs/quality.md: five pairs with a harmful click instead of seven, the same
 * NoC at 10 clicks).
 */
export const CLICK_SETTINGS: ClickSettings = {
  workSide: 512,
  smooth: 1,
  reach: 20,
  strength: 6,
  prior: 4,
  band: 3,
  weights: { spatial: 12, colour: 60, mask: 30 },
}

const logit = (v: number, bound: number) => {
  const p = Math.min(0.999, Math.max(0.001, v / 255))
  return Math.max(-bound, Math.min(bound, Math.log(p / (1 - p))))
}

/** The photo at the working size, as interleaved RGB. */
async function workingRgb(image: RgbImage, width: number, height: number, smooth: number): Promise<Uint8Array> {
  let pipeline = sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
  if (image.width !== width || image.height !== height) {
    pipeline = pipeline.resize(width, height, { fit: 'fill', kernel: 'linear' })
  }
  // sharp's blur takes a sigma of at least 0.3.
  if (smooth >= 0.3) pipeline = pipeline.blur(smooth)
  const { data } = await pipeline.raw().toBuffer({ resolveWithObject: true })
  return new Uint8Array(data.buffer, data.byteOffset, data.length)
}

/** Plain distance (working pixels, chamfer) from each pixel to the base's `foreground` side. */
function sideDistance(field: GeodesicField, foreground: boolean): Float32Array {
  const seeds: number[] = []
  for (let i = 0; i < field.mask.length; i++) if (field.mask[i] >= 128 === foreground) seeds.push(i)
  return geodesicDistance(field, { spatial: 1, colour: 0, mask: 0 }, seeds)
}

/**
 * The clicks at the working size grouped by clearance (working pixels from the side they ask for),
 * in steps of √2, so that a project's twenty clicks cost a handful of distance fields, not twenty:
 * a click answers in the same time however many came before it.
 */
function clearanceGroups(
  clicks: PixelPoint[],
  field: GeodesicField,
  scale: number,
  side: Float32Array | null,
  band: number,
) {
  // Clicks whose band reaches past every pixel's distance from their side are not limited by it: one group.
  let farthest = 0
  if (side) for (let i = 0; i < side.length; i++) if (side[i] > farthest && side[i] < Infinity) farthest = side[i]
  const groups = new Map<number, { seeds: number[]; clearance: number }>()
  for (const c of clicks) {
    const x = Math.min(field.width - 1, Math.floor(c.x * scale))
    const y = Math.min(field.height - 1, Math.floor(c.y * scale))
    const at = y * field.width + x
    const clearance = side ? side[at] : 0
    const unlimited = !side || band * clearance >= farthest
    const key = unlimited ? -1 : Math.floor(2 * Math.log2(Math.max(1, clearance)))
    const group = groups.get(key) ?? { seeds: [], clearance }
    group.seeds.push(at)
    group.clearance = Math.min(group.clearance, clearance)
    groups.set(key, group)
  }
  return [...groups.values()]
}

/**
 * Each pixel's pull from `clicks` on one side: the strongest of them. A click's pull falls off
 * with its geodesic distance, and, with a `band`, beyond `band` times the click's clearance from
 * the side it asks for: a click near the base's edge (a thin strip missed or taken in) moves that
 * edge along its length, without flooding the same-coloured surface behind it; a click deep in a
 * region may change all of it.
 */
function pullOf(
  field: GeodesicField,
  costs: GeodesicCosts,
  clicks: PixelPoint[],
  foreground: boolean,
  scale: number,
  s: ClickSettings,
): Float32Array {
  const pull = new Float32Array(field.width * field.height)
  const mine = clicks.filter((c) => c.foreground === foreground)
  if (!mine.length) return pull
  const side = s.band > 0 ? sideDistance(field, foreground) : null
  for (const group of clearanceGroups(mine, field, scale, side, s.band)) {
    // One distance field per group: within it the band is the same, so the strongest pull is
    // the nearest click's (exactly so when the clearances are equal; the group takes the least).
    const dist = geodesicDistance(costs, null, group.seeds)
    const limit = s.band * group.clearance
    for (let i = 0; i < pull.length; i++) {
      let p = Math.exp(-dist[i] / s.reach)
      if (side && side[i] > limit) p *= Math.exp(-(side[i] - limit) / Math.max(1, group.clearance))
      if (p > pull[i]) pull[i] = p
    }
  }
  return pull
}

/**
 * The mask `clicks` make of `base` (a new mask; `base` is not changed). `clicks` are in source
 * pixels, oldest first.
 */
export async function refineByClicks(
  image: RgbImage,
  base: Mask,
  clicks: PixelPoint[],
  settings: ClickSettings = CLICK_SETTINGS,
): Promise<Mask> {
  const { width, height } = base
  const scale = Math.min(1, settings.workSide / Math.max(width, height))
  const ws = Math.max(1, Math.round(width * scale))
  const hs = Math.max(1, Math.round(height * scale))
  const field: GeodesicField = {
    width: ws,
    height: hs,
    rgb: await workingRgb(image, ws, hs, settings.smooth),
    mask: resizeMask(base, ws, hs).data,
  }
  // A pixel of walk costs its share of crossing the photo: the same walk at any working size.
  const weights = { ...settings.weights, spatial: settings.weights.spatial / Math.max(ws, hs) }
  const costs = geodesicCosts(field, weights)
  // Each pixel's strongest pull towards foreground (in) and towards background (out), 0..1.
  const pullIn = pullOf(field, costs, clicks, true, scale, settings)
  const pullOut = pullOf(field, costs, clicks, false, scale, settings)

  const decided = new Uint8Array(ws * hs)
  const changed = new Uint8Array(ws * hs)
  let anyChange = false
  for (let i = 0; i < ws * hs; i++) {
    const pull = settings.strength * (pullIn[i] - pullOut[i])
    const odds = logit(field.mask[i], settings.prior) + pull
    decided[i] = Math.round(255 / (1 + Math.exp(-odds)))
    if (decided[i] >= 128 !== field.mask[i] >= 128) {
      changed[i] = 255
      anyChange = true
    }
  }

  const out = new Uint8Array(base.data)
  if (anyChange) {
    // Back at the source's size: the decision where it changed the base (the changed area grown by
    // the scaling's blur, so its edge is the decision's own soft edge), the base everywhere else.
    const up = resizeMask({ data: decided, width: ws, height: hs }, width, height).data
    const where = resizeMask({ data: changed, width: ws, height: hs }, width, height).data
    for (let i = 0; i < out.length; i++) if (where[i] > 0) out[i] = up[i]
  }
  honourPoints(out, width, height, clicks, 1)
  return { data: out, width, height }
}
