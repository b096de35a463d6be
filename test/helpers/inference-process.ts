/**
 * Starts the real inference server (the real model unless `env` asks for the stub segmenter) as a
 * child process and waits until it is ready.
 * It runs small on purpose: one model run at a time and two requests waiting
 * (INFERENCE_CONCURRENCY=1, INFERENCE_QUEUE_LIMIT=2), so three jobs in flight (the tests' slot limit
 * is 2 per workspace) fill it and `/health/ready` reports saturation — test/worker/saturation.test.ts.
 * Not smaller: a job whose /v1/remove meets a 503 spends one of its INFERENCE_MAX_ATTEMPTS (3 in
 * tests), so with a queue of 1 the batches test's three concurrent jobs lost jobs to
 * processor_unavailable.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const READY_TIMEOUT_MS = 180_000

export const TEST_INFERENCE_LIMITS = { INFERENCE_CONCURRENCY: '1', INFERENCE_QUEUE_LIMIT: '2' }

/**
 * The same small server with the test-only stub segmenter instead of the model (the Worker tests,
 * test/helpers/global-setup.ts). Each stub run takes 50 ms, a fraction of a model run: long enough
 * that a job is seen in flight, short enough that the stage's hundreds of jobs do not wait on it
 * (200 ms a run cost the stage ~30 s of its ~185 s, session 16).
 */
export const STUB_SEGMENTER = { ...TEST_INFERENCE_LIMITS, INFERENCE_SEGMENTER: 'stub', INFERENCE_STUB_DELAY_MS: '50' }

/**
 * A second stub server whose runs take 200 ms, behind the test proxy's 'slow' mode: nine jobs keep
 * it saturated long enough for its readiness to be seen saying so (saturation.test.ts: ~5 of ~47
 * polls, against 1 of 22 at 50 ms).
 */
export const SLOW_STUB_SEGMENTER = { ...STUB_SEGMENTER, INFERENCE_STUB_DELAY_MS: '200' }

/** The last lines a started server wrote to stdout (its JSON logs), for tests that follow a trace. */
const OUTPUT_LINES = new WeakMap<ChildProcess, string[]>()
const KEPT_LINES = 2_000

/** The last lines (up to 2,000) `child` wrote to stdout, oldest first. */
export const outputLines = (child: ChildProcess): string[] => OUTPUT_LINES.get(child) ?? []

export async function startInferenceServer(
  port: number,
  signingKey: string,
  env: Record<string, string> = TEST_INFERENCE_LIMITS,
): Promise<ChildProcess> {
  // Its stdout (a JSON line per request) is kept: shown if it fails to start, and read by the tests
  // that follow a job's trace into it (`outputLines`). Its stderr (errors) goes to the test run's.
  const child = spawn(process.execPath, ['--import', 'tsx', 'inference-server/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', INFERENCE_SIGNING_KEY: signingKey },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let stdout = ''
  const lines: string[] = []
  OUTPUT_LINES.set(child, lines)
  let partial = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout = (stdout + d).slice(-10_000)
    const split = (partial + d).split('\n')
    partial = split.pop() ?? ''
    lines.push(...split)
    if (lines.length > KEPT_LINES) lines.splice(0, lines.length - KEPT_LINES)
  })
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`inference server exited with ${child.exitCode}:\n${stdout}`)
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/ready`)
      if (res.ok) return child
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  child.kill('SIGKILL')
  throw new Error(`inference server did not become ready in time:\n${stdout}`)
}

export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}
