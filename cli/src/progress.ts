/**
 * @module
 * Progress for `remove` and `batch`: a cli-progress bar on a terminal, and one line per finished
 * file otherwise (logs and CI, where a redrawn bar is noise). Both go to stderr, so `--json`
 * output on stdout stays parseable.
 */
import cliProgress from 'cli-progress'

export interface Progress {
  /** One file is finished (done, skipped or failed); `line` says which and how. */
  tick(line: string): void
  stop(): void
}

export function createProgress(total: number, initial = 0): Progress {
  let count = initial
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: '{bar} {value}/{total} {file}', stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    )
    bar.start(total, initial, { file: '' })
    return {
      tick: (line) => bar.increment(1, { file: line }),
      stop: () => bar.stop(),
    }
  }
  return {
    tick: (line) => {
      count++
      process.stderr.write(`[${count}/${total}] ${line}\n`)
    },
    stop: () => {},
  }
}
