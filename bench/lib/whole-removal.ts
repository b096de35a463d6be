/**
 * `fast` against `balanced` end to end (issues 31 and 44; `npm run bench -- levels --whole`): a
 * removal's job time through the public API, from creating the removal (an upload made before the
 * clock starts) to the job's `succeeded` and the result's download, on the 1 MP and 12 MP
 * synthetic JPEGs. The two levels are interleaved round by round, the order swapped each round,
 * so load from others falls on both; medians and balanced's time over fast's within the one run.
 * Beside each job, the inference server's own steps for it (its `job` log line: decode, segment,
 * alpha, decontaminate, encode) and the result's size.
 */
import { type ApiCall, callApi } from './clients.js'
import { type BenchImage, syntheticJpeg } from './images.js'
import { type ApiStack, type InferenceServer, startApi, startInference } from './stack.js'
import { median, round, sleep } from './util.js'

const LEVELS = ['balanced', 'fast'] as const
type Level = (typeof LEVELS)[number]
const OPTIONS = { alpha: { mode: 'raw', feather: 0 }, output: 'cutout' } as const

/** One job through the API and the inference server's record of it. */
interface Job extends ApiCall {
  /** The inference server's steps (ms) and the time its slot was held (runMs). */
  server: Record<string, number>
}

/** The `/v1/remove` job lines the inference server has logged so far (metrics.ts `observeRequests`). */
function removeJobLines(server: InferenceServer): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (const line of server.child.log) {
    if (!line.startsWith('{')) continue
    try {
      const entry = JSON.parse(line) as Record<string, unknown>
      if (entry.msg === 'job' && entry.route === '/v1/remove') out.push(entry)
    } catch {
      // not a log line of ours
    }
  }
  return out
}

/** The last `/v1/remove` job line's steps, waiting up to 2 s for a line newer than `before`. */
async function serverSteps(server: InferenceServer, before: string | undefined): Promise<Record<string, number>> {
  for (let waited = 0; waited < 2000; waited += 50) {
    const last = removeJobLines(server).at(-1)
    if (last && last.time !== before) {
      const steps = (last.steps ?? {}) as Record<string, number>
      return { ...steps, runMs: Number(last.runMs ?? 0), queueMs: Number(last.queueMs ?? 0) }
    }
    await sleep(50)
  }
  return {}
}

async function oneJob(api: ApiStack, server: InferenceServer, image: BenchImage, quality: Level): Promise<Job> {
  for (let attempt = 1; ; attempt++) {
    const before = removeJobLines(server).at(-1)?.time as string | undefined
    try {
      const call = await callApi(api, image, { ...OPTIONS, quality })
      return { ...call, server: await serverSteps(server, before) }
    } catch (err) {
      // `wrangler dev` reloads the Worker when a source file changes (others work in this tree):
      // the request in flight fails once; the job is made again from the upload.
      if (attempt >= 3) throw err
      await sleep(5000)
    }
  }
}

/** Medians of one level's jobs. */
function summarise(jobs: Job[]) {
  const steps = [...new Set(jobs.flatMap((j) => Object.keys(j.server)))]
  return {
    jobMs: round(median(jobs.map((j) => j.removal + j.download)), 0),
    removalMs: round(median(jobs.map((j) => j.removal)), 0),
    downloadMs: round(median(jobs.map((j) => j.download)), 0),
    perJobMs: jobs.map((j) => round(j.removal + j.download, 0)),
    resultBytes: median(jobs.map((j) => j.bytes)),
    serverStepsMs: Object.fromEntries(steps.map((s) => [s, round(median(jobs.map((j) => j.server[s] ?? 0)), 0)])),
  }
}

/** `reps` rounds of both levels on `image` (after one warm-up job each). */
async function timeImage(
  api: ApiStack,
  server: InferenceServer,
  image: BenchImage,
  reps: number,
  log: (m: string) => void,
) {
  const jobs: Record<Level, Job[]> = { balanced: [], fast: [] }
  for (const quality of LEVELS) await oneJob(api, server, image, quality)
  for (let r = 0; r < reps; r++) {
    const order = r % 2 ? [...LEVELS].reverse() : LEVELS
    for (const quality of order) jobs[quality].push(await oneJob(api, server, image, quality))
    const last = (q: Level) => round((jobs[q].at(-1)?.removal ?? 0) + (jobs[q].at(-1)?.download ?? 0), 0)
    log(`whole removal ${image.name}: round ${r + 1}/${reps} balanced ${last('balanced')} ms, fast ${last('fast')} ms`)
  }
  const balanced = summarise(jobs.balanced)
  const fast = summarise(jobs.fast)
  return {
    image: image.name,
    size: `${image.width}×${image.height}`,
    megapixels: round((image.width * image.height) / 1e6, 2),
    reps,
    balanced,
    fast,
    balancedOverFast: round(balanced.jobMs / fast.jobMs, 2),
    fastResultSizeOverBalanced: round(fast.resultBytes / balanced.resultBytes, 3),
  }
}

/**
 * The end-to-end comparison: `reps` rounds at 1 MP, `bigReps` at 12 MP, through one API stack.
 * @example const r = await timeWholeRemovals({ reps: 5, bigReps: 3 })
 */
export async function timeWholeRemovals({
  reps = 5,
  bigReps = 3,
  log = (m: string) => process.stderr.write(`${m}\n`),
}: {
  reps?: number
  bigReps?: number
  log?: (m: string) => void
} = {}) {
  const small = await syntheticJpeg('1mp')
  const big = await syntheticJpeg('12mp')
  const server = await startInference()
  let images: Awaited<ReturnType<typeof timeImage>>[]
  try {
    // Polling a job every 100 ms outruns the default 120 requests a minute; a 12 MP job on a loaded
    // box may outlast the default inference deadline.
    const api = await startApi(server, {
      vars: { RATE_LIMIT_PER_MINUTE: '1000000', INFERENCE_DEADLINE_BASE_MS: '600000' },
    })
    try {
      images = [await timeImage(api, server, small, reps, log), await timeImage(api, server, big, bigReps, log)]
    } finally {
      await api.stop()
    }
  } finally {
    await server.stop()
  }
  log(`whole removal: ${JSON.stringify(images.map((i) => [i.image, i.balancedOverFast]))}`)
  return {
    method: `public API through wrangler dev: an upload, then the clock from POST /v1/removals (Prefer: wait=8, then polling the job every 100 ms) to the job's succeeded and the result's download; ${JSON.stringify(OPTIONS)}; balanced and fast interleaved (order swapped each round) after one warm-up job each; medians. serverStepsMs: the inference server's own steps of those jobs (its job log line), medians`,
    images,
  }
}
