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

/**
 * The model's time at each candidate input (`fast`'s choice, issue 31), uncached, on the same `n`
 * photos nearest 0.5 MP, `reps` rounds; within a round every input runs on the photo back to back
 * (native first), so load falls alike. Reported: the median time per input and the median over
 * photos and rounds of native time ÷ the input's time (the speed-up at the model), in wall time
 * and in the process's CPU time (the model thread's work, which other processes disturb less).
 */
export async function timeInputs(
  model: Segmenter,
  photos: Array<{ name: string; bytes: Uint8Array; width: number; height: number }>,
  inputs: Record<string, (image: { width: number; height: number }) => { width: number; height: number }>,
  { n = 4, reps = 2, log = (_: string) => {} }: { n?: number; reps?: number; log?: (m: string) => void } = {},
) {
  const { decodeImage } = await import('../../inference-server/src/imaging/decode.js')
  const chosen = [...photos]
    .sort((a, b) => Math.abs(a.width * a.height - 5e5) - Math.abs(b.width * b.height - 5e5))
    .slice(0, n)
  const images = await Promise.all(chosen.map(async (p) => (await decodeImage(p.bytes)).image))
  await model.segment(images[0], model.input.native) // the session's warm-up
  const keys = ['native', ...Object.keys(inputs)]
  const ms: Record<string, number[]> = Object.fromEntries(keys.map((k) => [k, []]))
  const cpu: Record<string, number[]> = Object.fromEntries(keys.map((k) => [k, []]))
  const speedup: Record<string, number[]> = Object.fromEntries(keys.map((k) => [k, []]))
  const cpuSpeedup: Record<string, number[]> = Object.fromEntries(keys.map((k) => [k, []]))
  for (let r = 0; r < reps; r++)
    for (const image of images) {
      const wall: Record<string, number> = {}
      const used: Record<string, number> = {}
      for (const k of keys) {
        const size = k === 'native' ? model.input.native : inputs[k](image)
        const start = performance.now()
        const before = process.cpuUsage()
        await model.segment(image, size)
        const u = process.cpuUsage(before)
        wall[k] = performance.now() - start
        used[k] = (u.user + u.system) / 1000
        ms[k].push(wall[k])
        cpu[k].push(used[k])
      }
      for (const k of keys) {
        speedup[k].push(wall.native / wall[k])
        cpuSpeedup[k].push(used.native / used[k])
      }
      log(
        `model time ${image.width}×${image.height}: ${keys.map((k) => `${k} ${Math.round(wall[k])} ms (cpu ${Math.round(used[k])})`).join(', ')}`,
      )
    }
  return {
    photos: chosen.map((p) => `${p.name} (${round((p.width * p.height) / 1e6, 2)} MP)`),
    reps,
    msMedian: Object.fromEntries(keys.map((k) => [k, round(median(ms[k]), 0)])),
    speedupMedian: Object.fromEntries(keys.map((k) => [k, round(median(speedup[k]), 2)])),
    speedupMin: Object.fromEntries(keys.map((k) => [k, round(Math.min(...speedup[k]), 2)])),
    /** CPU time of the process (the model's threads) per input: what a busy box disturbs least. */
    cpuMsMedian: Object.fromEntries(keys.map((k) => [k, round(median(cpu[k]), 0)])),
    cpuSpeedupMedian: Object.fromEntries(keys.map((k) => [k, round(median(cpuSpeedup[k]), 2)])),
  }
}
