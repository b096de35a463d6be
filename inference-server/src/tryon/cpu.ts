/**
 * The default try-on model (DESIGN.md §3 Virtual try-on), geometric and on CPU: decode both
 * photos; BlazePose finds the body (landmarks and a person mask; no body → `invalid_input`
 * naming the person image); the segmentation model cuts the garment out and its mask gives the
 * garment's key points; a thin-plate spline maps them onto the category's body region; the
 * person's forearms, hands and head stay in front; the person's shading is multiplied in.
 */
import sharp from 'sharp'
import type { Notice } from '../../../src/contract/frames.js'
import type { TryOnLandmarks, TryOnRequest } from '../../../src/contract/tryon.js'
import { TRYON_WARNINGS } from '../../../src/contract/tryon.js'
import { decodeReference } from '../catalog/references.js'
import { InferenceError } from '../errors.js'
import { placeGarment, type Placement } from './body.js'
import { composite, occlusion, shading } from './compose.js'
import { garmentMask, garmentPoints } from './garment.js'
import { EXPERIMENTAL_NOTICE, type TryOnContext, type TryOnInput, type TryOnModel, type TryOnResult } from './model.js'
import { createPoseEstimator, type Pose, type PoseEstimator } from './pose.js'
import { fitTps, warpLayer } from './tps.js'
import { stepTimer } from '../timings.js'

export const CPU_TRYON_VERSION = 'tryon-cpu@1'

/**
 * Below these the photo holds no body we can dress. The landmark model's flag alone is fooled (a
 * cat 0.76, the rocket 0.92), so the detector's score decides: the photos without a person reach
 * 0.39 at most (coffee 0.38, chelsea 0.38, rocket 0.39), the real people in
 * test/fixtures/people 0.51 at least (arms-raised.jpg, a close crop). See docs/try-on.md.
 */
const MIN_DETECTOR = 0.45
const MIN_FLAG = 0.5
/** How far past the placement's points the garment may reach (its edges lie outside them), as a fraction of the region. */
const MARGIN = 0.08

/**
 * @example const model = createCpuTryOn(); await model.ready(); await model.tryOn(input, options, { segmenter, onStage })
 */
export function createCpuTryOn(poses: PoseEstimator = createPoseEstimator()): TryOnModel {
  return {
    backend: 'cpu',
    version: (segmenter) => `${CPU_TRYON_VERSION}+${poses.version}+${segmenter.version}`,
    ready: () => poses.ready(),
    tryOn: (input, options, context) => tryOn(poses, input, options, context),
    close: () => poses.close(),
  }
}

function requirePose(pose: Pose): void {
  if (pose.detector >= MIN_DETECTOR && pose.flag >= MIN_FLAG) return
  throw new InferenceError(
    'invalid_input',
    `person: no person was found in the person image (${TRYON_WARNINGS.noPose}; detector ${pose.detector.toFixed(2)}, pose ${pose.flag.toFixed(2)})`,
  )
}

/** The warp's rectangle: the placement's region widened by MARGIN, inside the photo. */
function warpRect(placement: Placement, width: number, height: number) {
  const [x0, y0, x1, y1] = placement.region
  const mx = Math.round((x1 - x0) * MARGIN)
  const my = Math.round((y1 - y0) * MARGIN)
  const x = Math.max(0, x0 - mx)
  const y = Math.max(0, y0 - my)
  return { x, y, width: Math.max(1, Math.min(width, x1 + mx) - x), height: Math.max(1, Math.min(height, y1 + my) - y) }
}

/** All 33 landmarks go out: placement, sleeves and occlusion each use some of them. */
function landmarksOf(
  pose: Pose,
  rect: ReturnType<typeof warpRect>,
  size: { width: number; height: number },
): TryOnLandmarks {
  const points: TryOnLandmarks['points'] = {}
  for (const [name, p] of Object.entries(pose.points)) {
    points[name] = {
      x: Math.round(p.x * 10) / 10,
      y: Math.round(p.y * 10) / 10,
      score: Math.round(p.score * 1000) / 1000,
    }
  }
  return { ...size, points, region: [rect.x, rect.y, rect.x + rect.width, rect.y + rect.height] }
}

async function tryOn(
  poses: PoseEstimator,
  input: TryOnInput,
  options: TryOnRequest,
  { segmenter, onStage }: TryOnContext,
): Promise<TryOnResult> {
  const { timings, timed } = stepTimer()
  onStage('segmenting')
  const person = await timed('decode', () => decodeReference({ name: 'person', bytes: input.person }))
  const garment = await timed('decode', () => decodeReference({ name: 'garment', bytes: input.garment }))
  // The pose first: a photo without a person fails before the garment costs a model run.
  const pose = await timed('pose', () => poses.estimate(person))
  requirePose(pose)
  const modelMask = await timed('segment', () => segmenter.segment(garment))
  const mask = await timed('garment', () => garmentMask(garment, modelMask))
  const keyPoints = await timed('garment', () => garmentPoints(mask))

  onStage('rendering')
  const size = { width: person.width, height: person.height }
  const placement = placeGarment(pose, keyPoints, options.category, size)
  const rect = warpRect(placement, size.width, size.height)
  const layer = await timed('warp', () =>
    warpLayer(garment, mask, fitTps(placement.body, placement.garment, 1e-3), rect),
  )
  const rgb = await timed('compose', () => {
    const front = occlusion(layer, pose)
    const shade = shading(person, layer, Math.max(2, Math.round(Math.min(rect.width, rect.height) / 60)))
    return composite(person, layer, front, shade, options.seed)
  })
  const png = await timed('encode', () =>
    sharp(rgb, { raw: { ...size, channels: 3 } })
      .png({ compressionLevel: 6, adaptiveFiltering: false })
      .toBuffer(),
  )
  for (const step of Object.keys(timings)) timings[step] = Math.round(timings[step] * 10) / 10
  const warnings: Notice[] = [EXPERIMENTAL_NOTICE]
  if (placement.partial) {
    warnings.push({
      code: TRYON_WARNINGS.partialBody,
      message: `The ${options.category} region is not fully visible in the person image: the garment was placed from estimated landmarks`,
    })
  }
  return { png, ...size, landmarks: landmarksOf(pose, rect, size), warnings, timings }
}
