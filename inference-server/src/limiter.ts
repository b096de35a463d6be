/**
 * Admission control for model runs: at most `concurrency` at once, at most `queueLimit` waiting;
 * past that the request is refused at once with 503 rather than queued without bound (each
 * waiting request holds its body, and each running one up to ~1.5 GB at 25 MP).
 *
 * A waiting request whose caller goes away (the edge's deadline or a cancel aborted the call)
 * leaves the queue without running: otherwise dead work fills the queue, and the retries of the
 * very calls that timed out wait behind it (found by `npm run bench:faults`).
 */
import { InferenceError } from './errors.js'
import { BRIEF_RETRY_AFTER_S } from './http.js'

export interface LimiterStats {
  running: number
  queued: number
  concurrency: number
  queueLimit: number
  /** Requests that left the queue, never run, because their caller went away (since start). */
  dropped: number
  /** Admitted work stopped at a step boundary because its caller went away (since start). */
  stopped: number
}

/** How admitted work ended, told to the function that frees its slot. */
export type Release = (outcome?: 'finished' | 'stopped') => void

export class Limiter {
  readonly concurrency: number
  readonly queueLimit: number
  #running = 0
  #waiting: Array<() => void> = []
  #dropped = 0
  #stopped = 0

  constructor({ concurrency = 1, queueLimit = 8 }: { concurrency?: number; queueLimit?: number } = {}) {
    this.concurrency = concurrency
    this.queueLimit = queueLimit
  }

  /** True when a new request would be refused: every slot busy and the queue full. */
  get saturated(): boolean {
    return this.#running >= this.concurrency && this.#waiting.length >= this.queueLimit
  }

  get stats(): LimiterStats {
    return {
      running: this.#running,
      queued: this.#waiting.length,
      concurrency: this.concurrency,
      queueLimit: this.queueLimit,
      dropped: this.#dropped,
      stopped: this.#stopped,
    }
  }

  /**
   * Waits for a slot and returns the function that frees it (call it once). For work that
   * outlives the call that admitted it, such as a streamed answer. `signal` is the caller's: when
   * it aborts before a slot is free, the request leaves the queue and never runs.
   * @throws {InferenceError} `processor_unavailable` (Retry-After 1) when the queue is full, or
   *   when the caller went away first (an answer nobody reads)
   */
  async admit(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) throw this.#drop()
    if (this.#running >= this.concurrency) {
      if (this.#waiting.length >= this.queueLimit) {
        throw new InferenceError(
          'processor_unavailable',
          `Inference is saturated: ${this.#running} running, ${this.#waiting.length} queued`,
          { retryAfter: BRIEF_RETRY_AFTER_S },
        )
      }
      // The slot is handed over by release(), so #running never drops below the cap in between.
      await this.#wait(signal)
    } else {
      this.#running++
    }
    let released = false
    return (outcome = 'finished') => {
      if (released) return
      released = true
      if (outcome === 'stopped') this.#stopped++
      this.#release()
    }
  }

  /**
   * Runs `task` when a slot is free (not at all when `signal` aborts first).
   * @throws {InferenceError} `processor_unavailable` (Retry-After 1) when the queue is full
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.admit(signal)
    try {
      return await task()
    } finally {
      release()
    }
  }

  /** Queues until release() hands this request the slot, or leaves the queue when `signal` aborts. */
  #wait(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const admitted = () => {
        signal?.removeEventListener('abort', gone)
        resolve()
      }
      const gone = () => {
        const at = this.#waiting.indexOf(admitted)
        if (at === -1) return // already handed the slot: the work sees the abort at its next step
        this.#waiting.splice(at, 1)
        reject(this.#drop())
      }
      this.#waiting.push(admitted)
      signal?.addEventListener('abort', gone, { once: true })
    })
  }

  #drop(): InferenceError {
    this.#dropped++
    return new InferenceError('processor_unavailable', 'The caller went away before the work began')
  }

  #release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#running--
  }
}
