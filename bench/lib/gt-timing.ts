/**
 * The time ratios of issue 31, in the ground-truth benchmark's own run: each level through the
 * real pipeline (removeBackground with the real model, uncached, cutout output) on the `n` photos
 * nearest 0.5 MP, the levels interleaved per photo so a busy box slows them alike. `high` ≤ 3×
 * `balanced`'s time per photo; `fast` ≥ 2× faster than `balanced` at the model (the segment stage).
 */
import type { Quality } from '../../inference-server/src/options.js'
import { removeBackground } from '../../inference-server/src/remove.js'
import type { Segmenter } from '../../inference-server/src/segmentation/index.js'
import { round } from './util.js'

const LEVELS: Quality[] = ['fast', 'balanced', 'high']
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

export async function timeLevels(
  model: Segmenter,
  photos: Array<{ name: string; bytes: Uint8Array; width: number; height: number }>,
  n: number,
  log: (m: string) => void,
) {
  const chosen = [...photos]
    .sort((a, b) => Math.abs(a.width * a.height - 5e5) - Math.abs(b.width * b.height - 5e5))
    .slice(0, n)
  const options = { alpha: { mode: 'raw' as const, feather: 0 }, output: 'cutout' as const }
  // One untimed run first: the first session.run pays for the session's warm-up.
  await removeBackground(model, chosen[0].bytes, { ...options, quality: 'balanced' })
  const ms: Record<string, number[]> = { fast: [], balanced: [], high: [] }
  const segment: Record<string, number[]> = { fast: [], balanced: [], high: [] }
  for (const p of chosen)
    for (const q of LEVELS) {
      const t = (await removeBackground(model, p.bytes, { ...options, quality: q })).timings
      ms[q].push(t.decode + t.segment + t.alpha + t.encode)
      segment[q].push(t.segment)
      log(
        `time ${p.name} ${q}: ${Math.round(t.decode + t.segment + t.alpha + t.encode)} ms (segment ${Math.round(t.segment)})`,
      )
    }
  const per = Object.fromEntries(
    LEVELS.map((q) => [q, { ms: round(median(ms[q]), 0), segmentMs: round(median(segment[q]), 0) }]),
  )
  // Ratios per photo (interleaved runs), then their median.
  const ratio = (f: (i: number) => number) => round(median(chosen.map((_, i) => f(i))), 2)
  const highToBalanced = ratio((i) => ms.high[i] / ms.balanced[i])
  const fastSpeedup = ratio((i) => segment.balanced[i] / segment.fast[i])
  return {
    photos: chosen.map((p) => `${p.name} (${round((p.width * p.height) / 1e6, 2)} MP)`),
    perLevel: per,
    highToBalanced,
    highOk: highToBalanced <= 3,
    fastModelSpeedup: fastSpeedup,
    fastOk: fastSpeedup >= 2,
  }
}
