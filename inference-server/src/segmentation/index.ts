/**
 * Segmentation capability: a `Segmenter` turns decoded RGB into a mask at source size.
 * The server depends only on this interface, so tests can inject a stub and another model
 * (SEGMENTATION_MODEL) or runtime can slot in without touching routes.
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import { planSession, type ModelOptions } from './model.js'
import { startModelThread } from './model-thread.js'
import { toSourceMask } from './postprocess.js'
import { MODEL_SIZE, toInputTensor } from './preprocess.js'

export interface Segmenter {
  /** e.g. `isnet-general@1.4.5+fp16`, sent back as `X-Model-Version`. */
  readonly version: string
  /** The soft foreground mask of `image`, at the image's size. */
  segment(image: RgbImage): Promise<Mask>
  /** Frees the native session. */
  close(): Promise<void>
}

/**
 * Loads the model once (in its own thread) and returns the segmenter that reuses its session for
 * every call.
 * @example const segmenter = await createSegmenter({ threads: 2 });
 */
export async function createSegmenter(options: ModelOptions = {}): Promise<Segmenter> {
  const plan = await planSession(options)
  const model = await startModelThread(plan)
  return {
    version: plan.version,
    async segment(image) {
      let output: Float32Array
      try {
        // Only the main output comes back: asking for all 12 of ISNet's costs ~300 MB more.
        output = await model.run(toInputTensor(image), [1, 3, MODEL_SIZE, MODEL_SIZE])
      } catch (err) {
        throw new Error(`Inference failed for model ${plan.version}`, { cause: err })
      }
      const data = toSourceMask(output, MODEL_SIZE, image.width, image.height)
      return { data, width: image.width, height: image.height }
    },
    close: () => model.close(),
  }
}
