/**
 * How an onnxruntime CPU session holds the memory of its runs (`INFERENCE_MEMORY_ARENA`, on by
 * default). Measured on ISNet's size-agnostic graph, 2 threads, in one process (session 15,
 * docs/decisions.md); the outputs are identical float for float either way (the kernels are the
 * same). onnxruntime-web (wasm) ignores both settings.
 *
 * - `resident` (the default): the arena on, no memory pattern. The arena keeps what a run used
 *   (one 512 MB region for ISNet at 1024²), so the next run finds its pages already there: 1.0–1.3 s
 *   a 1024² run and ~2.3 CPU-s; the first run in a process, which grows the arena, ~2.7 s.
 *   The server's RSS stays at ~1.34 GB between requests and peaks at 1.40 GB (bench:soak).
 * - `released`: the arena off and a memory pattern per input size, as before session 15. Each run
 *   asks the system for its tensors afresh and faults their pages in: 2.1–2.9 s and ~5 CPU-s a
 *   1024² run, the first at each new size 8–12 s. RSS falls back to ~0.67 GB between requests but
 *   peaks higher, at 1.56 GB, during a run: for hosts that share their memory between bursts.
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
