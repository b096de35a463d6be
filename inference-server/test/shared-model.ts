/**
 * One real model per test process. vitest runs this package's files two at a time in forks that
 * keep their module graph from file to file (vitest.config.ts, `isolate: false`), so a module-level
 * model serves every file a fork runs: the ~1 GB session loads once per fork, not once per file,
 * and `masks` remembers each mask across files (remembered-masks.ts), so the astronaut at 1024² is
 * run once per fork rather than once in each file that shows something after its mask.
 *
 * `model` runs the model on every call: for what needs a run in flight (readiness during a run, the
 * stages arriving before the output). Files do not close either: the fork's exit ends the thread.
 */
import { createSegmenter, type Segmenter } from '../src/segmentation/index.js'
import { type RememberingSegmenter, rememberMasks } from './remembered-masks.js'

export interface SharedModel {
  /** The real model; every call runs it. */
  model: Segmenter
  /** The same model remembering its masks across the fork's files. */
  masks: RememberingSegmenter
}

let shared: Promise<SharedModel> | undefined

/** The fork's model, loaded on first use. */
export function sharedModel(): Promise<SharedModel> {
  shared ??= createSegmenter().then((segmenter) => {
    // A file that closes what it was handed must not close the other files' model.
    const model: Segmenter = {
      version: segmenter.version,
      input: segmenter.input,
      segment: (image, size) => segmenter.segment(image, size),
      close: async () => {},
    }
    return { model, masks: rememberMasks(model) }
  })
  shared.catch(() => {
    shared = undefined
  })
  return shared
}
