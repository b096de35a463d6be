/**
 * How an onnxruntime CPU session holds the memory of a run: its memory arena on, and no memory
 * pattern. Measured on ISNet's size-agnostic graph, 2 threads, nine runs at 1024², 640², 768×1024
 * and 1280² in one process (session 15, docs/decisions.md):
 *
 * - Arena off (what ran before): each run asks the system for its tensors afresh and faults the
 *   pages in: 2.1–2.5 s a 1024² run, and the first run at each new input size 8–12 s. 70 CPU-s in all.
 * - Arena on, pattern on: 1.05–1.2 s a 1024² run, 25 CPU-s, but a steady RSS of 1.5–1.75 GB (the
 *   pattern's block on top of the arena's), over DESIGN.md §4's 1.2 GB.
 * - Arena on, pattern off (this): 1.0–1.1 s a 1024² run, 21 CPU-s, steady RSS 1.06 GB after 1024²
 *   runs (1.29 GB after a 1280² one, which no level asks for).
 *
 * The outputs are identical float for float in all three (the kernels are the same). onnxruntime-web
 * (wasm) ignores both settings.
 */
export const SESSION_MEMORY = { enableCpuMemArena: true, enableMemPattern: false } as const
