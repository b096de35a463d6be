/**
 * A real segmenter that runs the model once per distinct image and input size and hands back a
 * copy of the same mask after that. For test files whose subject is what comes after the mask
 * (layout, shadows, seeds): the model's own output is held to its promises in segmentation,
 * reference, graph and sessions tests, and a model run costs seconds on a 2-core box.
 */
import { createHash } from 'node:crypto'
import type { Mask } from '../src/imaging/types.js'
import type { Segmenter } from '../src/segmentation/index.js'

export interface RememberingSegmenter extends Segmenter {
  /** How many times the real model(s) ran. */
  readonly runs: number
}

/** Wraps `segmenter` (and each level's, when levels run different models); `close` closes it. */
export function rememberMasks(segmenter: Segmenter): RememberingSegmenter {
  const masks = new Map<string, Promise<Mask>>()
  const levels = new Map<Segmenter, RememberingSegmenter>()
  let runs = 0
  const remembering: RememberingSegmenter = {
    version: segmenter.version,
    input: segmenter.input,
    get runs() {
      return runs + [...levels.values()].reduce((n, level) => n + level.runs, 0)
    },
    async segment(image, size) {
      const digest = createHash('sha256').update(image.data).digest('hex')
      const key = `${image.width}x${image.height}@${size ? `${size.width}x${size.height}` : 'native'}:${digest}`
      let mask = masks.get(key)
      if (!mask) {
        runs++
        mask = segmenter.segment(image, size)
        masks.set(key, mask)
        mask.catch(() => masks.delete(key))
      }
      const { data, width, height } = await mask
      return { data: data.slice(), width, height }
    },
    close: () => segmenter.close(),
  }
  if (segmenter.forLevel) {
    const forLevel = segmenter.forLevel.bind(segmenter)
    remembering.forLevel = (quality) => {
      const level = forLevel(quality)
      if (level === segmenter) return remembering
      const known = levels.get(level)
      if (known) return known
      const wrapped = rememberMasks(level)
      levels.set(level, wrapped)
      return wrapped
    }
  }
  return remembering
}
