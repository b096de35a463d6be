/**
 * The model in a worker thread (model-worker.mjs). onnxruntime-node runs a session synchronously
 * on the thread that calls it, so on the event loop a 1 s model run would stall `/health/ready`
 * (the edge gives up after 2 s and reads "unavailable"), the reading of queued request bodies and
 * the limiter's 503s. Inputs and outputs move by transfer, not copy.
 */
import { Worker } from 'node:worker_threads'
import { ioNames, loadError, type SessionPlan } from './model.js'

export interface ModelThread {
  inputName: string
  outputName: string
  /** Runs the model once; `input` is transferred (unusable afterwards). */
  run(input: Float32Array, dims: readonly number[]): Promise<Float32Array>
  close(): Promise<void>
}

type Reply = { id: number; output?: ArrayBuffer; error?: string }

/**
 * Starts the thread and opens the session in it.
 * @throws {Error} the session's load error, naming the model and providers
 */
export async function startModelThread(plan: SessionPlan): Promise<ModelThread> {
  const worker = new Worker(new URL('./model-worker.mjs', import.meta.url), {
    workerData: { path: plan.path, options: plan.options, runtime: plan.runtime },
  })
  const ready = await new Promise<{ inputNames: string[]; outputNames: string[] }>((resolve, reject) => {
    worker.once('error', reject)
    worker.once('message', (msg: { type: string; message?: string; inputNames: string[]; outputNames: string[] }) => {
      if (msg.type === 'ready') resolve(msg)
      else reject(new Error(msg.message))
    })
  }).catch(async (err) => {
    await worker.terminate()
    throw loadError(plan, err)
  })
  // A profiled model names its input and output (recognize.ts); the built-in ISNet's are found here.
  const found = ioNames(ready.inputNames, ready.outputNames)
  const inputName = plan.inputName ?? found.inputName
  const outputName = plan.outputName ?? found.outputName

  let nextId = 0
  const pending = new Map<number, { resolve: (v: Float32Array) => void; reject: (e: Error) => void }>()
  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  }
  worker.on('message', (msg: Reply | { type: string }) => {
    if (!('id' in msg)) return
    const p = pending.get(msg.id)
    if (!p) return
    pending.delete(msg.id)
    if (msg.error !== undefined || !msg.output) p.reject(new Error(msg.error ?? 'no output'))
    else p.resolve(new Float32Array(msg.output))
  })
  worker.on('error', (err) => failAll(err))
  worker.on('exit', (code) => failAll(new Error(`model thread exited with code ${code}`)))

  return {
    inputName,
    outputName,
    run(input, dims) {
      const id = nextId++
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject })
        const buffer =
          input.byteOffset === 0 && input.byteLength === input.buffer.byteLength ? input.buffer : input.slice().buffer
        worker.postMessage({ id, input: buffer, dims, inputName, outputName }, [buffer as ArrayBuffer])
      })
    },
    async close() {
      const closed = new Promise<void>((resolve) =>
        worker.once('message', (m: { type?: string }) => m.type === 'closed' && resolve()),
      )
      worker.postMessage({ type: 'close' })
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000))])
      await worker.terminate()
    },
  }
}
