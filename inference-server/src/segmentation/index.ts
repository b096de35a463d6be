/**
 * Segmentation capability: a `Segmenter` turns decoded RGB into a mask at source size.
 * The server depends only on this interface, so tests can inject a stub and another model
 * (SEGMENTATION_MODEL) or runtime can slot in without touching routes.
 */
import type { Mask, RgbImage } from '../imaging/types.js'
import type { Quality } from '../options.js'
import { type ModelInput, type ModelOptions, planSession, type SessionPlan } from './model.js'
import { type ModelThread, startModelThread } from './model-thread.js'
import { inputSizeFor, profileInput, profileMask } from './pipeline.js'
import { toSourceMask } from './postprocess.js'
import { type InputSize, toInputTensor } from './preprocess.js'
import { BUILTIN_PROFILE } from './profiles.js'

export type { InputSize } from './preprocess.js'
export type { ModelInput } from './model.js'

export interface Segmenter {
  /** e.g. `isnet-general@1.4.5+fp16`, sent back as `X-Model-Version`. */
  readonly version: string
  /** The input sizes the model takes (quality levels pick among them, levels/). */
  readonly input: ModelInput
  /**
   * The soft foreground mask of `image`, at the image's size, with the model run at `size`
   * (default: its native input; a static model ignores `size`).
   */
  segment(image: RgbImage, size?: InputSize): Promise<Mask>
  /** Frees the native session. */
  close(): Promise<void>
  /**
   * The segmenter of a quality level when levels run different models (per-level.ts); absent
   * when one model serves every level.
   */
  forLevel?(quality: Quality): Segmenter
}

/**
 * `sessions` model threads, each with its own session, and a run goes to the least busy one: with
 * 2 cores, two 1-thread sessions running two images at once is the other way to use them than one
 * 2-thread session (bench/throughput.ts measured both: +9 % images per minute for +60 % memory;
 * docs/quality.md "Throughput").
 */
async function startPool(plan: SessionPlan, sessions: number) {
  const threads: ModelThread[] = []
  try {
    for (let i = 0; i < sessions; i++) threads.push(await startModelThread(plan))
  } catch (err) {
    await Promise.all(threads.map((t) => t.close()))
    throw err
  }
  const busy = threads.map(() => 0)
  return {
    async run(input: Float32Array, dims: readonly number[]): Promise<Float32Array> {
      const i = busy.indexOf(Math.min(...busy))
      busy[i]++
      try {
        return await threads[i].run(input, dims)
      } finally {
        busy[i]--
      }
    },
    close: async () => {
      await Promise.all(threads.map((t) => t.close()))
    },
  }
}

/**
 * Loads the model once per session (each in its own thread) and returns the segmenter that reuses
 * the sessions for every call.
 * @example const segmenter = await createSegmenter({ threads: 2 });
 */
export async function createSegmenter({
  sessions = 1,
  ...options
}: ModelOptions & { sessions?: number } = {}): Promise<Segmenter> {
  return segmenterFor(await planSession(options), sessions)
}

/** The input a run uses: the level's size on a model that takes any, else the model's own rule. */
function runSize(plan: SessionPlan, image: RgbImage, size?: InputSize): InputSize {
  if (plan.input.kind === 'any' && size) return size
  if (plan.input.kind === 'image' && plan.profile.size.kind === 'short-side')
    return inputSizeFor(plan.profile.size, image.width, image.height)
  return plan.input.native
}

/** Starts the sessions of a planned model (planSession) and wraps them as a Segmenter. */
export async function segmenterFor(plan: SessionPlan, sessions = 1): Promise<Segmenter> {
  const model = await startPool(plan, sessions)
  // The built-in ISNet keeps the reference package's own pre- and post-processing, bit for bit.
  const builtin = plan.profile.name === BUILTIN_PROFILE
  return {
    version: plan.version,
    input: plan.input,
    async segment(image, size) {
      const input = runSize(plan, image, size)
      const tensor = builtin ? toInputTensor(image, input) : profileInput(plan.profile, image, input)
      let output: Float32Array
      try {
        // Only the main output comes back: asking for all 12 of ISNet's costs ~300 MB more.
        output = await model.run(tensor, [1, 3, input.height, input.width])
      } catch (err) {
        throw new Error(`Inference failed for model ${plan.version}`, { cause: err })
      }
      const data = builtin
        ? toSourceMask(output, input, image.width, image.height)
        : profileMask(plan.profile, output, input, image.width, image.height)
      return { data, width: image.width, height: image.height }
    },
    close: () => model.close(),
  }
}
