/**
 * Segmentation capability: a `Segmenter` turns decoded RGB into a mask at source size.
 * The server depends only on this interface, so tests can inject a stub and another model
 * (SEGMENTATION_MODEL) or runtime can slot in without touching routes.
 */
import * as ort from 'onnxruntime-node';
import type { Mask, RgbImage } from '../imaging/types.js';
import { loadModel, type ModelOptions } from './model.js';
import { toSourceMask } from './postprocess.js';
import { MODEL_SIZE, toInputTensor } from './preprocess.js';

export interface Segmenter {
  /** e.g. `isnet-general@1.4.5+fp16`, sent back as `X-Model-Version`. */
  readonly version: string;
  /** The soft foreground mask of `image`, at the image's size. */
  segment(image: RgbImage): Promise<Mask>;
  /** Frees the native session. */
  close(): Promise<void>;
}

/**
 * Loads the model once and returns the segmenter that reuses its session for every call.
 * @example const segmenter = await createSegmenter({ threads: 2 });
 */
export async function createSegmenter(options: ModelOptions = {}): Promise<Segmenter> {
  const { session, version, inputName, outputName } = await loadModel(options);
  return {
    version,
    async segment(image) {
      const input = new ort.Tensor('float32', toInputTensor(image), [1, 3, MODEL_SIZE, MODEL_SIZE]);
      let output: ort.Tensor;
      try {
        // Fetch only the main output: asking for all 12 of ISNet's costs ~300 MB more.
        const result = await session.run({ [inputName]: input }, [outputName]);
        output = result[outputName];
      } catch (err) {
        throw new Error(`Inference failed for model ${version}`, { cause: err });
      }
      const data = toSourceMask(output.data as Float32Array, MODEL_SIZE, image.width, image.height);
      output.dispose();
      return { data, width: image.width, height: image.height };
    },
    async close() {
      await session.release();
    },
  };
}
