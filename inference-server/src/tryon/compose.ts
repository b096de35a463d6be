/**
 * Puts the warped garment on the photo: what stays in front of it (forearms and hands, the head
 * and hair, where the landmarks and the person mask put them), the person's shading multiplied
 * in (the photo's luminance under the garment, blurred and normalised to its mean, so folds and
 * the light's fall-off show through a flat garment photo), and a seeded dither as the colours go
 * back to 8 bits. No relighting, no inpainting: what the garment does not cover stays as it was.
 */
import type { RgbImage } from '../imaging/types.js'
import { seededRandom } from '../catalog/random.js'
import type { Pose } from './pose.js'
import type { WarpedLayer } from './tps.js'

/** How much of the person's shading goes into the garment (1 = all of it). */
const SHADING = 0.8
/** The shading's bounds: a black shirt-print never becomes a hole, a highlight never clips all white. */
const SHADE_MIN = 0.45
const SHADE_MAX = 1.3

/** Distance from p to the segment ab. */
function segmentDistance(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax
  const dy = by - ay
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy || 1)))
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy))
}

/**
 * 0..1 per layer pixel: how much of the person is in front of the garment there. Forearms and
 * hands are capsules along elbow → wrist → fingers; the head is an ellipse around the face and
 * ears (hair falls inside it). Both only where the person mask says the person is.
 */
export function occlusion(layer: WarpedLayer, pose: Pose): Float32Array {
  const { rect } = layer
  const p = pose.points
  const shoulderWidth = Math.hypot(p.leftShoulder.x - p.rightShoulder.x, p.leftShoulder.y - p.rightShoulder.y)
  const radius = Math.max(4, 0.1 * shoulderWidth)
  const seen = (...names: Array<keyof Pose['points']>) => names.every((n) => p[n].score >= 0.5)
  const limbs: Array<[keyof Pose['points'], keyof Pose['points']]> = [
    ['leftElbow', 'leftWrist'],
    ['rightElbow', 'rightWrist'],
    ['leftWrist', 'leftIndex'],
    ['rightWrist', 'rightIndex'],
    ['leftWrist', 'leftPinky'],
    ['rightWrist', 'rightPinky'],
  ]
  const segments = limbs.filter(([a, b]) => seen(a, b)).map(([a, b]) => [p[a].x, p[a].y, p[b].x, p[b].y])
  const head = {
    x: (p.nose.x + p.leftEar.x + p.rightEar.x) / 3,
    y: (p.nose.y + p.leftEar.y + p.rightEar.y) / 3,
    r: Math.max(0.3 * shoulderWidth, 0.75 * Math.hypot(p.leftEar.x - p.rightEar.x, p.leftEar.y - p.rightEar.y)),
  }
  const out = new Float32Array(rect.width * rect.height)
  for (let y = 0; y < rect.height; y++) {
    for (let x = 0; x < rect.width; x++) {
      const o = y * rect.width + x
      if (layer.alpha[o] === 0) continue
      const px = rect.x + x
      const py = rect.y + y
      const person = pose.mask.data[py * pose.mask.width + px] / 255
      if (person === 0) continue
      let front = ((px - head.x) / head.r) ** 2 + ((py - head.y) / (1.25 * head.r)) ** 2 <= 1 ? 1 : 0
      for (const [ax, ay, bx, by] of segments) {
        if (front) break
        // A soft edge over 2 px, so the arm's outline is not a stair.
        front = Math.max(front, Math.min(1, Math.max(0, radius + 1 - segmentDistance(px, py, ax, ay, bx, by)) / 2))
      }
      out[o] = front * person
    }
  }
  return out
}

/** The photo's luminance over the layer's rectangle, box-blurred (radius r) and divided by its mean under the garment. */
export function shading(photo: RgbImage, layer: WarpedLayer, r: number): Float32Array {
  const { rect } = layer
  const lum = new Float32Array(rect.width * rect.height)
  for (let y = 0; y < rect.height; y++) {
    for (let x = 0; x < rect.width; x++) {
      const i = ((rect.y + y) * photo.width + rect.x + x) * 3
      lum[y * rect.width + x] = 0.299 * photo.data[i] + 0.587 * photo.data[i + 1] + 0.114 * photo.data[i + 2]
    }
  }
  const blurred = boxBlur(boxBlur(lum, rect.width, rect.height, r, 1), rect.width, rect.height, r, rect.width)
  let sum = 0
  let weight = 0
  for (let o = 0; o < blurred.length; o++) {
    sum += blurred[o] * layer.alpha[o]
    weight += layer.alpha[o]
  }
  const mean = weight > 0 ? sum / weight : 1
  for (let o = 0; o < blurred.length; o++) {
    const ratio = mean > 0 ? blurred[o] / mean : 1
    blurred[o] = Math.min(SHADE_MAX, Math.max(SHADE_MIN, 1 + SHADING * (ratio - 1)))
  }
  return blurred
}

/** One pass of a box blur along rows (step 1) or columns (step = width), edges clamped. */
function boxBlur(src: Float32Array, width: number, height: number, r: number, step: number): Float32Array {
  const out = new Float32Array(src.length)
  const lines = step === 1 ? height : width
  const length = step === 1 ? width : height
  const stride = step === 1 ? width : 1
  for (let line = 0; line < lines; line++) {
    const base = line * stride
    let sum = 0
    for (let k = -r; k <= r; k++) sum += src[base + Math.min(length - 1, Math.max(0, k)) * step]
    for (let i = 0; i < length; i++) {
      out[base + i * step] = sum / (2 * r + 1)
      sum += src[base + Math.min(length - 1, i + r + 1) * step] - src[base + Math.max(0, i - r) * step]
    }
  }
  return out
}

/**
 * The photo with the garment over it: colour × shade, coverage × (1 − occlusion), rounded with a
 * dither drawn from `seed` (the model's one random choice), so equal inputs give equal bytes.
 */
export function composite(
  photo: RgbImage,
  layer: WarpedLayer,
  front: Float32Array,
  shade: Float32Array,
  seed: number,
): Uint8Array {
  const out = Uint8Array.from(photo.data)
  const rand = seededRandom(seed)
  const { rect } = layer
  for (let y = 0; y < rect.height; y++) {
    for (let x = 0; x < rect.width; x++) {
      const o = y * rect.width + x
      const a = layer.alpha[o] * (1 - front[o])
      if (a <= 0) continue
      const i = ((rect.y + y) * photo.width + rect.x + x) * 3
      for (let c = 0; c < 3; c++) {
        const garment = Math.min(255, layer.rgb[o * 3 + c] * shade[o])
        const v = photo.data[i + c] * (1 - a) + garment * a + (rand() - 0.5)
        out[i + c] = v < 0 ? 0 : v > 255 ? 255 : Math.round(v)
      }
    }
  }
  return out
}
