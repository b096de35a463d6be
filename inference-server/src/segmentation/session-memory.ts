/**
 * How an onnxruntime CPU session holds the memory of its runs (`INFERENCE_MEMORY_ARENA`, on by
 * default). Measured on ISNet's size-agnostic graph, 2 threads, in one process (session 15,
 * docs/decisions.md); the outputs are identical float for float either way (the kernels are the
 * same). onnxruntime-web (wasm) ignores both settings.
 *
 * - `resident` (the default): the arena on, no memory pattern. The arena keeps what a run used
 *   (one 512 MB region for ISNet at 1024²), so the next run finds its pages already there: 1.0–1.3 s
 *   a 1024² run and ~2.3 CPU-s; the first run in a process, which grows the arena, ~2.7 s.
 *   The server's RSS stays at ~1.02 GB between requests and peaks at 1.12 GB with MALLOC_ENV
 *   below (1.37 and 1.42 GB without it; bench:soak, session 18).
 * - `released`: the arena off and a memory pattern per input size, as before session 15. Each run
 *   asks the system for its tensors afresh and faults their pages in: 2.1–2.9 s and ~5 CPU-s a
 *   1024² run, the first at each new size 8–12 s. RSS falls back to ~0.67 GB between requests but
 *   peaks higher, at 1.56 GB, during a run (both before MALLOC_ENV; with it ~0.5 GB after runs):
 *   for hosts that share their memory between bursts.
 * - The arena with a pattern was measured too: as fast as `resident`, at 1.5–1.75 GB between requests.
 */
export type SessionMemory = 'resident' | 'released'

const OPTIONS = {
  resident: { enableCpuMemArena: true, enableMemPattern: false },
  released: { enableCpuMemArena: false, enableMemPattern: true },
} as const

/** The session options for `memory`. */
export const sessionMemoryOptions = (memory: SessionMemory = 'resident') => OPTIONS[memory]

/** `INFERENCE_MEMORY_ARENA=0` releases a run's memory after it; anything else keeps it resident. */
export const sessionMemoryFromEnv = (env: Record<string, string | undefined>): SessionMemory =>
  env.INFERENCE_MEMORY_ARENA === '0' ? 'released' : 'resident'

/**
 * glibc's malloc setting the server runs with (docs/decisions.md "A session keeps its runs' memory, and glibc gives it back"). glibc reads it when
 * the process starts, so whatever starts the server sets it: `npm start` (scripts/start.ts), the
 * benchmarks (bench/lib/stack.ts) and the Dockerfiles, which cannot import this and say it again.
 *
 * A fixed mmap threshold (glibc's own starting value, 128 KiB) turns off malloc's dynamic one,
 * which rises to the size of each large block freed (up to 32 MiB). Loading the model frees large
 * blocks (the model's bytes, the graph before it is optimised), so without it the weights and
 * every later large allocation land in malloc's heaps, which keep their pages after a free: 1.37
 * GB resident between requests in the soak instead of 1.02 GB. The model runs as fast; a request
 * takes 1–3 % longer (large buffers' pages faulted in afresh; bench/malloc.ts).
 */
export const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' } as const

/** The glibc version a Linux process runs on (from Node's diagnostic report), else undefined. */
export function glibcVersion(): string | undefined {
  if (process.platform !== 'linux') return undefined
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
  return header?.glibcVersionRuntime
}

/** A warning for a server started on glibc without MALLOC_ENV (or any malloc setting of its own), else undefined. */
export function mallocWarning(env: Record<string, string | undefined>, glibc: string | undefined): string | undefined {
  if (!glibc || Object.keys(env).some((name) => name.startsWith('MALLOC_'))) return undefined
  return (
    `MALLOC_MMAP_THRESHOLD_ is not set: set ${Object.entries(MALLOC_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')} ` +
    'where the server is started to keep ~350 MB less resident (glibc reads it at process start; docs/deploy.md)'
  )
}
