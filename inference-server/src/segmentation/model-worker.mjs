// The model thread: owns the one onnxruntime session so its synchronous `run` never blocks the
// HTTP event loop (health checks, request bodies, queueing stay live during a model run).
// Plain JavaScript on purpose: worker threads load it directly under tsx, vitest and plain node.
// Protocol (see model-thread.ts): workerData = { path, options }; → { type: 'ready', inputNames,
// outputNames } or { type: 'error' }; { id, input: ArrayBuffer, dims, inputName, outputName } →
// { id, output: ArrayBuffer, dims } | { id, error }; { type: 'close' } → { type: 'closed' }.
import { parentPort, workerData } from 'node:worker_threads'
import * as ort from 'onnxruntime-node'

let session
try {
  session = await ort.InferenceSession.create(workerData.path, workerData.options)
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
