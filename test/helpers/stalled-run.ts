/**
 * A vitest reporter that ends a run whose files have all ended but whose end never comes.
 *
 * With `isolate: false` and one worker, vitest hands every file of the Worker stage to one runner
 * in workerd as one task (vitest.worker.config.mts) and waits, with no timeout, for the runner to
 * say the task finished. A clean-clone run on this box (issue 32, session 13) never heard it: all
 * 39 files had passed and printed, nothing ran (workerd and vitest idle), and the stage would have
 * hung until CI's own limit. Where the runner loses that message in
 * @cloudflare/vitest-pool-workers 0.15.1 is not found yet (docs/decisions.md).
 *
 * `STALL_MS` after the last file ended without the run's end, this says so, makes the exit code
 * non-zero if any file failed (the files' own results) and asks vitest to exit,
 * which runs the global teardown (the stage's servers) before it stops. A normal run ends within
 * seconds of its last file; the pool's own longest wait (a Worker's `waitUntil`) is 30 s.
 */
import type { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node'

export const STALL_MS = 120_000

export interface StalledRunOptions {
  stallMs?: number
  /** Ends the process (tests pass a spy); default: vitest's own forced exit. */
  exit?: (vitest: Vitest) => Promise<void> | void
  log?: (message: string) => void
}

export default class StalledRunReporter implements Reporter {
  private vitest?: Vitest
  private expected = 0
  private readonly ended: TestModule[] = []
  private timer?: ReturnType<typeof setTimeout>

  constructor(private readonly options: StalledRunOptions = {}) {}

  onInit(vitest: Vitest): void {
    this.vitest = vitest
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.expected = specifications.length
    this.ended.length = 0
  }

  onTestModuleEnd(module: TestModule): void {
    this.ended.push(module)
    if (this.expected > 0 && this.ended.length === this.expected) {
      this.timer = setTimeout(() => void this.stalled(), this.options.stallMs ?? STALL_MS)
      this.timer.unref?.()
    }
  }

  onTestRunEnd(): void {
    clearTimeout(this.timer)
  }

  /** The files' own verdict: every one ended with no failed test. */
  passed(): boolean {
    return this.ended.length === this.expected && this.ended.every((m) => m.ok())
  }

  private async stalled(): Promise<void> {
    const log = this.options.log ?? ((message: string) => console.error(message))
    const passed = this.passed()
    log(
      `[stalled-run] all ${this.ended.length} files ended ${((this.options.stallMs ?? STALL_MS) / 1000).toFixed(0)} s ago and the run never did (the pool lost its end; test/helpers/stalled-run.ts): exiting with the files' result, ${passed ? 'passed' : 'failed'}`,
    )
    // Not set to 0 when they passed: an error vitest already counted keeps its non-zero code.
    if (!passed) process.exitCode = 1
    if (this.options.exit) await this.options.exit(this.vitest as Vitest)
    else await this.vitest?.exit(true)
  }
}
