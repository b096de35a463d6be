/**
 * Super-resolution for subjects smaller than their place on the canvas: ESRGAN slim
 * (`@upscalerjs/esrgan-slim`, MIT; trained on DIV2K, whose licence is research-only: see
 * docs/catalog.md) on tfjs's wasm backend, in a worker thread (sr-worker.mjs) so seconds of
 * wasm never stall the HTTP event loop. The thread starts on first use and holds the event loop
 * open only while a run is pending. The weights are the package's own files.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { RgbImage } from '../imaging/types.js'

export const ESRGAN_PACKAGE = '@upscalerjs/esrgan-slim'
/**
 * The scales used (the package also has x4 and x8). Measured on the fixtures (docs/catalog.md):
 * x4's output repeats every fourth row and column (its last upsampling is nearest-neighbour), a
 * stair-step that shows once enlarged further; x8 costs as much as x4 on a quarter of the input.
 */
export const ESRGAN_SCALES = [2, 3] as const
/** The models' training patch size: tiles of this size keep memory flat whatever the subject. */
const TILE = 128
/** Pixels of neighbouring tiles each tile is read with, so seams do not show. */
const CONTEXT = 8

export interface Upscaler {
  /** e.g. `esrgan-slim@1.0.0`. */
  readonly version: string
  /** `image` at `scale` times its size (`scale` one of `ESRGAN_SCALES`). */
  upscale(image: RgbImage, scale: number): Promise<RgbImage>
  close(): Promise<void>
}

/**
 * The smallest model scale that reaches `factor`, or the largest: lanczos3 then shrinks the
 * model's output to size, or finishes the enlargement past 3×. Enlarging x2's output with
 * lanczos3 instead scored below plain lanczos3 on the fixtures (sharpness and PSNR at 2.5×–4×).
 */
export function modelScaleFor(factor: number): number {
  return ESRGAN_SCALES.find((s) => s >= factor) ?? ESRGAN_SCALES[ESRGAN_SCALES.length - 1]
}

/** A package's root directory (its exports map hides package.json, so step up from its entry). */
function packageRoot(name: string): string {
  const require = createRequire(import.meta.url)
  let dir = dirname(require.resolve(name))
  while (!existsSync(join(dir, 'package.json')) || readPackage(dir).name !== name) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`Could not find the root of ${name}`)
    dir = parent
  }
  return dir
}

const readPackage = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string }

type Reply = { id: number; data?: ArrayBuffer; width?: number; height?: number; error?: string }

/**
 * The ESRGAN upscaler. Nothing starts until the first `upscale`.
 * @example const up = createEsrganUpscaler(); const big = await up.upscale(image, 2)
 */
export function createEsrganUpscaler(): Upscaler {
  const root = packageRoot(ESRGAN_PACKAGE)
  const version = `esrgan-slim@${readPackage(root).version}`
  const wasmDir = `${dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm'))}/`
  let worker: Worker | undefined
  let nextId = 0
  const pending = new Map<number, { resolve: (v: RgbImage) => void; reject: (e: Error) => void }>()

  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err)
    pending.clear()
    worker = undefined
  }
  const start = (): Worker => {
    const w = new Worker(new URL('./sr-worker.mjs', import.meta.url), {
      workerData: { wasmDir, modelDir: join(root, 'models'), tile: TILE, context: CONTEXT },
    })
    w.on('message', (msg: Reply | { type: string }) => {
      if (!('id' in msg)) return
      const p = pending.get(msg.id)
      if (!p) return
      pending.delete(msg.id)
      // Idle: let the process exit (a server is held open by its socket anyway).
      if (!pending.size) w.unref()
      if (msg.error !== undefined || !msg.data) p.reject(new Error(msg.error ?? 'no output'))
      else p.resolve({ data: new Uint8Array(msg.data), width: msg.width ?? 0, height: msg.height ?? 0, channels: 3 })
    })
    w.on('error', (err) => failAll(err))
    w.on('exit', (code) => failAll(new Error(`super-resolution thread exited with code ${code}`)))
    return w
  }

  return {
    version,
    upscale(image, scale) {
      if (!ESRGAN_SCALES.includes(scale as (typeof ESRGAN_SCALES)[number])) {
        return Promise.reject(new Error(`No ESRGAN model for scale ${scale}`))
      }
      worker ??= start()
      const w = worker
      w.ref()
      const id = nextId++
      return new Promise<RgbImage>((resolve, reject) => {
        pending.set(id, { resolve, reject })
        // A copy of its own: `Buffer#slice` shares sharp's memory, which Node 24 will not transfer.
        const data = new Uint8Array(image.data).buffer
        w.postMessage({ id, data, width: image.width, height: image.height, scale }, [data])
      }).catch((err: Error) => {
        throw new Error(`Super-resolution with ${version} failed: ${err.message}`, { cause: err })
      })
    },
    async close() {
      const w = worker
      if (!w) return
      worker = undefined
      const closed = new Promise<void>((resolve) =>
        w.on('message', (m: { type?: string }) => m.type === 'closed' && resolve()),
      )
      // An idle thread is unref'd: held again, or a script awaiting this would find its event
      // loop empty and exit before the thread answers.
      w.ref()
      w.postMessage({ type: 'close' })
      let timer: NodeJS.Timeout | undefined
      await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, 2000)))])
      clearTimeout(timer)
      await w.terminate()
    },
  }
}
