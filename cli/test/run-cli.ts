/** Runs the built CLI (cli/dist/main.js, as `npx cutout` runs it) in a child process. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url))

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs the CLI (no TTY: progress comes as lines). `onStderr` sees its stderr as it arrives. */
export function cli(args: string[], env: Record<string, string>, onStderr?: (text: string) => void): Promise<Run> {
  const base = { ...process.env }
  delete base.CUTOUT_API_KEY // a developer's own key must not stand in for the stored session
  delete base.CUTOUT_BASE_URL
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const run: Run = { code: -1, stdout: '', stderr: '' }
  child.stdout.on('data', (d) => (run.stdout += d))
  child.stderr.on('data', (d) => {
    run.stderr += d
    onStderr?.(run.stderr)
  })
  return new Promise<Run>((resolve) => child.once('close', (code) => resolve({ ...run, code: code ?? -1 })))
}
