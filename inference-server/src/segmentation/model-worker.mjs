// The model thread: owns the one onnxruntime session so its synchronous `run` never blocks the
// HTTP event loop (health checks, request bodies, queueing stay live during a model run).
// Plain JavaScript on purpose: worker threads load it directly under tsx, vitest and plain node.
// Protocol (see model-thread.ts): workerData = { path, options, runtime }; → { type: 'ready', inputNames,
// outputNames } or { type: 'error' }; { id, input: ArrayBuffer, dims, inputName, outputName } →
// { id, output: ArrayBuffer, dims } | { id, error }; { type: 'close' } → { type: 'closed' }.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'

/**
 * `node`: onnxruntime-node's native binary. `web`: onnxruntime-web's wasm build, for hosts
 * without the native binary; its .wasm files load from the package in node_modules (never a
 * CDN), and its thread count is a global setting rather than a session option.
 */
async function loadRuntime(runtime, options) {
  if (runtime !== 'web') return { ort: await import('onnxruntime-node'), options }
  const ort = await import('onnxruntime-web')
  ort.env.wasm.wasmPaths = `${dirname(createRequire(import.meta.url).resolve('onnxruntime-web'))}/`
  ort.env.wasm.numThreads = options.intraOpNumThreads ?? 1
  const { executionProviders, graphOptimizationLevel, enableCpuMemArena } = options
  return { ort, options: { executionProviders, graphOptimizationLevel, enableCpuMemArena } }
}

const { ort, options } = await loadRuntime(workerData.runtime, workerData.options)
let session
try {
  // Bytes rather than a path: onnxruntime-web reads paths with fetch, which cannot open files.
  const model = workerData.runtime === 'web' ? await readFile(workerData.path) : workerData.path
  session = await ort.InferenceSession.create(model, options)
  parentPort.postMessage({ type: 'ready', inputNames: session.inputNames, outputNames: session.outputNames })
} catch (err) {
  parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) })
}

parentPort.on('message', async (msg) => {
  if (msg.type === 'close') {
    await session?.release()
    parentPort.postMessage({ type: 'closed' })
    return
  }
  const { id, input, dims, inputName, outputName } = msg
  try {
    const feeds = { [inputName]: new ort.Tensor('float32', new Float32Array(input), dims) }
    const result = await session.run(feeds, [outputName])
    const tensor = result[outputName]
    // Copy into a buffer we own, so it can be transferred (not cloned) back to the main thread.
    const output = new Float32Array(tensor.data)
    tensor.dispose?.()
    parentPort.postMessage({ id, output: output.buffer, dims: tensor.dims }, [output.buffer])
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) })
  }
})
