// The super-resolution thread: ESRGAN (the tfjs layers models of @upscalerjs/esrgan-slim) on
// tfjs's wasm backend. A run takes seconds of synchronous wasm, so it lives off the HTTP event
// loop, like the segmentation model (../segmentation/model-worker.mjs). Plain JavaScript on
// purpose: worker threads load it directly under tsx, vitest and plain node.
// Protocol (see upscale.ts): workerData = { wasmDir, modelDir, tile, context };
// { id, data: ArrayBuffer (RGB, 8-bit), width, height, scale } → { id, data, width, height } | { id, error };
// { type: 'close' } → { type: 'closed' }. Weights are read from the package's files, never fetched.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm'
import * as tf from '@tensorflow/tfjs-core'
import * as tfl from '@tensorflow/tfjs-layers'

const { wasmDir, modelDir, tile, context } = workerData

/** The wasm backend, once. Its emscripten glue adds process listeners that rethrow: this thread's own. */
const ready = (async () => {
  setWasmPaths(wasmDir)
  if (!(await tf.setBackend('wasm'))) throw new Error('the tfjs wasm backend did not initialise')
  await tf.ready()
})()

/** One layers model per scale (x2, x3, x4, x8), loaded from memory on first use. */
const models = new Map()
function model(scale) {
  if (!models.has(scale)) {
    models.set(
      scale,
      (async () => {
        await ready
        const dir = join(modelDir, `x${scale}`)
        const json = JSON.parse(await readFile(join(dir, 'model.json'), 'utf8'))
        const [manifest] = json.weightsManifest
        const weights = await readFile(join(dir, manifest.paths[0]))
        const buffer = weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength)
        const io = tf.io.fromMemory({
          modelTopology: json.modelTopology,
          weightSpecs: manifest.weights,
          weightData: buffer,
        })
        return tfl.loadLayersModel(io)
      })(),
    )
  }
  return models.get(scale)
}

/**
 * Upscales in tiles of `tile` px, each read with `context` px of its neighbours around it (so the
 * convolutions see across tile seams) and only its own part kept: bounded memory, and the same
 * grid, so the same bytes, for the same input. Values are rounded and clamped to 8 bits.
 */
function upscaleTiles(net, data, width, height, scale) {
  const outWidth = width * scale
  const out = new Uint8Array(outWidth * height * scale * 3)
  for (let ty = 0; ty < height; ty += tile) {
    for (let tx = 0; tx < width; tx += tile) {
      const x0 = Math.max(0, tx - context)
      const y0 = Math.max(0, ty - context)
      const x1 = Math.min(width, tx + tile + context)
      const y1 = Math.min(height, ty + tile + context)
      const w = x1 - x0
      const h = y1 - y0
      const input = new Float32Array(w * h * 3)
      for (let y = 0; y < h; y++) {
        const from = ((y0 + y) * width + x0) * 3
        for (let k = 0; k < w * 3; k++) input[y * w * 3 + k] = data[from + k]
      }
      const values = tf.tidy(() => net.predict(tf.tensor4d(input, [1, h, w, 3])).dataSync())
      // Keep this tile's own part: [tx, tx + tile) × [ty, ty + tile), at the model's scale.
      const keepW = (Math.min(width, tx + tile) - tx) * scale
      const keepH = (Math.min(height, ty + tile) - ty) * scale
      const offX = (tx - x0) * scale
      const offY = (ty - y0) * scale
      const rowW = w * scale
      for (let y = 0; y < keepH; y++) {
        const src = ((offY + y) * rowW + offX) * 3
        const dst = ((ty * scale + y) * outWidth + tx * scale) * 3
        for (let k = 0; k < keepW * 3; k++) {
          const v = Math.round(values[src + k])
          // biome-ignore lint/complexity/useMathMinMax: the clamp as written before Biome 2.6 (a per-value hot loop)
          out[dst + k] = v < 0 ? 0 : v > 255 ? 255 : v
        }
      }
    }
  }
  return out
}

parentPort.on('message', async (msg) => {
  if (msg.type === 'close') {
    for (const loading of models.values()) (await loading.catch(() => undefined))?.dispose()
    parentPort.postMessage({ type: 'closed' })
    return
  }
  const { id, data, width, height, scale } = msg
  try {
    const net = await model(scale)
    const out = upscaleTiles(net, new Uint8Array(data), width, height, scale)
    parentPort.postMessage({ id, data: out.buffer, width: width * scale, height: height * scale }, [out.buffer])
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) })
  }
})
