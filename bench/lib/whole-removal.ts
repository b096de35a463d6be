/**
 * `fast` against `balanced` for a whole removal (issue 31; `tsx bench/levels.ts --whole`): the
 * inference server's `/v1/remove` with a cutout (decode → the level's mask → decontamination and
 * PNG encode), at ~0.5 MP and 12 MP, the two levels interleaved round by round (the order swapped
 * each round) so load from others falls on both; medians and ratios within the one run. Beside it,
 * in process, `fast`'s finish alone on the 12 MP photo, decided at full size (as before issue 31's
 * working size) and at the model input's pixels (as shipped).
 */
import { decodeImage } from '../../inference-server/src/imaging/decode.js'
import { FAST_DEFAULTS, fastInputFor, finishFast } from '../../inference-server/src/levels/fast.js'
import { createSegmenter } from '../../inference-server/src/segmentation/index.js'
import { callServer, type ServerCall } from './clients.js'
import { type BenchImage, syntheticJpeg } from './images.js'
import { startInference } from './stack.js'
import { median, round } from './util.js'

const LEVELS = ['balanced', 'fast'] as const
const OPTIONS = { alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const

/** Medians of each level's calls: wall time and the server's own steps. */
function summarise(calls: ServerCall[]) {
  const steps = [...new Set(calls.flatMap((c) => Object.keys(c.timing)))]
  return {
    wallMs: round(median(calls.map((c) => c.ms)), 0),
    perCallMs: calls.map((c) => round(c.ms, 0)),
    serverStepsMs: Object.fromEntries(steps.map((s) => [s, round(median(calls.map((c) => c.timing[s] ?? 0)), 0)])),
  }
}

/** `reps` rounds of both levels on `image` through one server (after one warm-up call each). */
async function timeImage(
  url: Parameters<typeof callServer>[0],
  image: BenchImage,
  reps: number,
  log: (m: string) => void,
) {
  const calls: Record<string, ServerCall[]> = { balanced: [], fast: [] }
  for (const quality of LEVELS) await callServer(url, image, { ...OPTIONS, quality })
  for (let r = 0; r < reps; r++) {
    const order = r % 2 ? [...LEVELS].reverse() : LEVELS
    for (const quality of order) calls[quality].push(await callServer(url, image, { ...OPTIONS, quality }))
    log(`whole removal ${image.name}: round ${r + 1}/${reps}`)
  }
  const balanced = summarise(calls.balanced)
  const fast = summarise(calls.fast)
  return {
    image: image.name,
    megapixels: round((image.width * image.height) / 1e6, 2),
    reps,
    balanced,
    fast,
    balancedOverFast: round(balanced.wallMs / fast.wallMs, 2),
  }
}

/** `fast`'s finish alone on `image` (one model run at fast's input), full size against working size. */
async function timeFinish(image: BenchImage, reps: number) {
  const { image: rgb } = await decodeImage(image.bytes)
  const segmenter = await createSegmenter()
  try {
    const input = fastInputFor(rgb, segmenter.input)
    const mask = await segmenter.segment(rgb, input)
    const times = { fullSize: [] as number[], workingSize: [] as number[] }
    for (let r = 0; r < reps; r++) {
      for (const [key, pixels] of [
        ['fullSize', Number.POSITIVE_INFINITY],
        ['workingSize', input.width * input.height],
      ] as const) {
        const t0 = performance.now()
        await finishFast(rgb, mask, FAST_DEFAULTS, pixels)
        times[key].push(performance.now() - t0)
      }
    }
    return {
      image: image.name,
      input,
      fullSizeMs: round(median(times.fullSize), 0),
      workingSizeMs: round(median(times.workingSize), 0),
    }
  } finally {
    await segmenter.close()
  }
}

/**
 * The whole-removal comparison: `reps` rounds at ~0.5 MP, `bigReps` at 12 MP.
 * @example const r = await timeWholeRemovals({ reps: 3, bigReps: 2 })
 */
export async function timeWholeRemovals({
  reps = 3,
  bigReps = 2,
  log = (m: string) => process.stderr.write(`${m}\n`),
}: {
  reps?: number
  bigReps?: number
  log?: (m: string) => void
} = {}) {
  const small = await syntheticJpeg('0.5mp')
  const big = await syntheticJpeg('12mp')
  const server = await startInference()
  let images: Awaited<ReturnType<typeof timeImage>>[]
  try {
    images = [await timeImage(server, small, reps, log), await timeImage(server, big, bigReps, log)]
  } finally {
    await server.stop()
  }
  const finish = await timeFinish(big, bigReps)
  log(
    `whole removal: ${JSON.stringify(images.map((i) => [i.image, i.balancedOverFast]))}; finish ${JSON.stringify(finish)}`,
  )
  return {
    method: `inference server /v1/remove, ${JSON.stringify(OPTIONS)}, balanced and fast interleaved (order swapped each round) after one warm-up each; wall time from signing the request to the done frame, medians`,
    images,
    fastFinishAt12mp: finish,
  }
}
