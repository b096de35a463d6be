/**
 * Keeps a child running under `npm start` (issue 15 item 2): when it exits on its own it is
 * started again after a backoff (0.5 s doubling to 30 s, back to 0.5 s once a run lasted a minute),
 * with a log line each way. The Worker stays up meanwhile: jobs in flight see a lost server, retry
 * with their own backoff, and end `processor_unavailable` only if it stays down past their attempts.
 */
import type { Child } from './processes'

export interface SuperviseOptions {
  /** Starts one run of the child (its own process group, output prefixed). */
  start(): Child
  /** Resolves true once a run can take work (its readiness answered), false if it exited first. */
  ready(child: Child): Promise<boolean>
  /** Called with each run as it starts, so the caller can stop the current one. */
  onStart(child: Child): void
  /** True once the whole stack is stopping: an exit then is expected, and nothing restarts. */
  stopping(): boolean
  log(message: string): void
  name: string
  minBackoffMs?: number
  maxBackoffMs?: number
  /** A run that lasted this long was healthy: the next restart waits the minimum again. */
  stableMs?: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Runs the child and restarts it whenever it exits until `stopping()`; returns when stopping. */
export async function supervise(options: SuperviseOptions): Promise<void> {
  const { minBackoffMs = 500, maxBackoffMs = 30_000, stableMs = 60_000 } = options
  let backoff = minBackoffMs
  for (let restarts = 0; ; restarts++) {
    const startedAt = Date.now()
    const child = options.start()
    options.onStart(child)
    if (restarts > 0) void announceReady(options, child, startedAt)
    const code = await child.exited
    if (options.stopping()) return
    if (Date.now() - startedAt >= stableMs) backoff = minBackoffMs
    options.log(
      `${options.name} exited with code ${code}; restarting in ${(backoff / 1000).toFixed(1)} s ` +
        `(restart ${restarts + 1}); the Worker stays up and jobs in flight will retry`,
    )
    await sleep(backoff)
    if (options.stopping()) return
    backoff = Math.min(maxBackoffMs, backoff * 2)
  }
}

async function announceReady(options: SuperviseOptions, child: Child, startedAt: number): Promise<void> {
  if (await options.ready(child)) {
    options.log(`${options.name} is back: ready ${((Date.now() - startedAt) / 1000).toFixed(1)} s after the restart`)
  }
}
