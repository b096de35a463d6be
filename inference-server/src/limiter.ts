/**
 * Admission control for model runs: at most `concurrency` at once, at most `queueLimit` waiting;
 * past that the request is refused at once with 503 rather than queued without bound (each
 * waiting request holds its body, and each running one up to ~1.5 GB at 25 MP).
 */
import { InferenceError } from './errors.js'

export interface LimiterStats {
  running: number
  queued: number
  concurrency: number
  queueLimit: number
}

export class Limiter {
  readonly concurrency: number
  readonly queueLimit: number
  #running = 0
  #waiting: Array<() => void> = []

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
    }
  }

  /**
   * Waits for a slot and returns the function that frees it (call it once). For work that
   * outlives the call that admitted it, such as a streamed answer.
   * @throws {InferenceError} `processor_unavailable` (Retry-After 1) when the queue is full
   */
  async admit(): Promise<() => void> {
    if (this.#running >= this.concurrency) {
      if (this.#waiting.length >= this.queueLimit) {
        throw new InferenceError(
          'processor_unavailable',
          `Inference is saturated: ${this.#running} running, ${this.#waiting.length} queued`,
          { retryAfter: 1 },
        )
      }
      // The slot is handed over by release(), so #running never drops below the cap in between.
      await new Promise<void>((resolve) => this.#waiting.push(resolve))
    } else {
      this.#running++
    }
    let released = false
    return () => {
      if (released) return
      released = true
      this.#release()
    }
  }

  /**
   * Runs `task` when a slot is free.
   * @throws {InferenceError} `processor_unavailable` (Retry-After 1) when the queue is full
   */
  async run<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.admit()
    try {
      return await task()
    } finally {
      release()
    }
  }

  #release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#running--
  }
}
