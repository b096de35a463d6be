/**
 * @module
 * OpenCV (`@techstark/opencv-js` 4.5.2: the official opencv.js build, Emscripten wasm) loaded once,
 * lazily, on the first refinement that needs it: evaluating its 7.7 MB script costs ~0.2 s and the
 * runtime then initialises asynchronously, so a server that never refines never pays for it.
 * Traps this module handles:
 * - The module object has a `then` method (Emscripten's), so awaiting it or resolving a promise
 *   with it never settles; we only ever pass it around inside a wrapper object.
 * - Its heap (a 128 MB WebAssembly memory that grows up to 1 GB and never shrinks) is separate from
 *   the JS heap: every `Mat` must be `delete()`d, and callers keep images small (grabcut.ts works
 *   at a bounded size).
 * Only the few calls the refinement uses are typed here.
 */
import { createRequire } from 'node:module'

export interface CvMat {
  data: Uint8Array
  rows: number
  cols: number
  delete(): void
}

export interface OpenCv {
  Mat: { new (): CvMat; new (rows: number, cols: number, type: number): CvMat }
  Rect: new (x: number, y: number, width: number, height: number) => unknown
  CV_8UC1: number
  CV_8UC3: number
  GC_BGD: number
  GC_FGD: number
  GC_PR_BGD: number
  GC_PR_FGD: number
  GC_INIT_WITH_MASK: number
  grabCut(img: CvMat, mask: CvMat, rect: unknown, bgd: CvMat, fgd: CvMat, iterations: number, mode: number): void
  /** OpenCV's global RNG seeds GrabCut's k-means: reset before each cut for the same answer every time. */
  setRNGSeed(seed: number): void
}

interface Runtime extends OpenCv {
  onRuntimeInitialized?: () => void
}

let loading: Promise<{ cv: OpenCv }> | undefined

/**
 * The OpenCV runtime, initialised; the same one for every caller.
 * @example const { cv } = await loadOpenCv();
 */
export function loadOpenCv(): Promise<{ cv: OpenCv }> {
  loading ??= new Promise<{ cv: OpenCv }>((resolve, reject) => {
    try {
      const require = createRequire(import.meta.url)
      const cv = require('@techstark/opencv-js') as Runtime
      // Depending on timing the runtime may already be up when require returns.
      if (typeof cv.Mat === 'function') resolve({ cv })
      else cv.onRuntimeInitialized = () => resolve({ cv })
    } catch (err) {
      reject(err)
    }
  }).catch((err) => {
    loading = undefined
    throw new Error('Could not load OpenCV', { cause: err })
  })
  return loading
}

/**
 * Runs `work` with a list that every `Mat` it makes is added to, and deletes them all afterwards,
 * whether it returns or throws.
 * @example await withMats((keep) => { const m = keep(new cv.Mat()); … })
 */
export function withMats<T>(work: (keep: <M extends CvMat>(mat: M) => M) => T): T {
  const mats: CvMat[] = []
  try {
    return work((mat) => {
      mats.push(mat)
      return mat
    })
  } finally {
    for (const mat of mats) mat.delete()
  }
}
