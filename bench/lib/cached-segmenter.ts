/**
 * A Segmenter that remembers the model's masks on disk (bench/.cache/masks/, ignored by git: the
 * masks are of ../shared/gt's photos), keyed by the model's version, the exact input pixels and
 * the input size. The model is deterministic, so a cached mask is the mask the model would give:
 * the quality benchmark runs each level's real code (levels/, imaging/) over cached masks and can
 * score many candidate rules and parameters without running the model again (issue 31).
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Mask, RgbImage } from '../../inference-server/src/imaging/types.js'
import type { InputSize, Segmenter } from '../../inference-server/src/segmentation/index.js'

export const CACHE_DIR = fileURLToPath(new URL('../.cache/masks/', import.meta.url))

/** Counts of what a cached segmenter served, for the report (how much the model really ran). */
export interface CacheStats {
  hits: number
  misses: number
  /** Model time of the misses, ms. */
  modelMs: number
}

/**
 * `segmenter` behind a disk cache; `offline` refuses to run the model (throws on a miss), so an
 * offline evaluation cannot silently become a slow one.
 */
export function cachedSegmenter(segmenter: Segmenter, { offline = false } = {}): Segmenter & { stats: CacheStats } {
  mkdirSync(CACHE_DIR, { recursive: true })
  const stats: CacheStats = { hits: 0, misses: 0, modelMs: 0 }
  return {
    version: segmenter.version,
    input: segmenter.input,
    stats,
    async segment(image: RgbImage, size?: InputSize): Promise<Mask> {
      const key = createHash('sha1')
        .update(
          `${segmenter.version}|${image.width}x${image.height}|${size ? `${size.width}x${size.height}` : 'native'}|`,
        )
        .update(image.data)
        .digest('hex')
      const file = `${CACHE_DIR}${key}.raw`
      if (existsSync(file)) {
        stats.hits++
        return { data: new Uint8Array(readFileSync(file)), width: image.width, height: image.height }
      }
      if (offline) throw new Error(`no cached mask for ${image.width}×${image.height} at ${JSON.stringify(size)}`)
      const start = performance.now()
      const mask = await segmenter.segment(image, size)
      stats.modelMs += performance.now() - start
      stats.misses++
      // Written aside and renamed: two runs sharing the cache never read a half-written mask.
      const partial = `${file}.${process.pid}.partial`
      writeFileSync(partial, mask.data)
      renameSync(partial, file)
      return mask
    },
    close: () => segmenter.close(),
  }
}
