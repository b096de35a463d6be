/** Milliseconds per named step of a piece of work (a step run twice adds up), for `done` frames. */
export function stepTimer() {
  const timings: Record<string, number> = {}
  const timed = async <T>(step: string, work: () => Promise<T> | T): Promise<T> => {
    const started = performance.now()
    try {
      return await work()
    } finally {
      timings[step] = (timings[step] ?? 0) + performance.now() - started
    }
  }
  return { timings, timed }
}
