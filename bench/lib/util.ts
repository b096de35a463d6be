/** Small helpers shared by the benchmarks: statistics, machine facts, child processes, ports. */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url))

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Polls `probe` every 250 ms until it holds; throws naming `what` after `waitMs`. */
export async function until(
  probe: () => boolean | Promise<boolean>,
  what: string | (() => string),
  waitMs: number,
): Promise<void> {
  const deadline = Date.now() + waitMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`)
    await sleep(250)
  }
}

export interface Stats {
  n: number
  median: number
  min: number
  max: number
}

/** Median, min and max of a series (ms), rounded to 0.1. */
export function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  const r = (v: number) => Math.round(v * 10) / 10
  return { n: values.length, median: r(median), min: r(sorted[0]), max: r(sorted[sorted.length - 1]) }
}

export const median = (values: number[]): number => stats(values).median

/** Times `work` `n` times (after `warmup` untimed runs) and returns the durations in ms. */
export async function repeat(n: number, work: () => Promise<unknown>, warmup = 0): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await work()
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await work()
    times.push(performance.now() - t0)
  }
  return times
}

export function machineInfo() {
  const load: number[] = os.loadavg()
  return {
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: load.map((v) => Math.round(v * 100) / 100),
    versions: packageVersions(),
  }
}

function packageVersions(): Record<string, string> {
  const read = (path: string) => (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version
  const out: Record<string, string> = {}
  for (const [name, path] of [
    ['onnxruntime-node', 'node_modules/onnxruntime-node/package.json'],
    ['sharp', 'inference-server/node_modules/sharp/package.json'],
    ['@imgly/background-removal-node', 'node_modules/@imgly/background-removal-node/package.json'],
    ['wrangler', 'node_modules/wrangler/package.json'],
  ] as const) {
    try {
      out[name] = read(`${ROOT}${path}`)
    } catch {
      out[name] = 'unknown'
    }
  }
  return out
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

export interface Child {
  proc: ChildProcess
  name: string
  /** Output kept for the error message when the child dies early. */
  log: string[]
}

/** Spawns a child in its own process group (so stopping it reaches wrangler's workerd too). */
export function startChild(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  verbose = false,
): Child {
  const proc = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const child: Child = { proc, name, log: [] }
  for (const stream of [proc.stdout, proc.stderr]) {
    stream?.setEncoding('utf8')
    stream?.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (!line.trim()) continue
        child.log.push(line)
        if (child.log.length > 200) child.log.shift()
        if (verbose) process.stderr.write(`[${name}] ${line}\n`)
      }
    })
  }
  return child
}

/** SIGTERM to the child's group, SIGKILL after `graceMs`. */
export async function stopChild(child: Child, graceMs = 8000): Promise<void> {
  const pid = child.proc.pid
  if (!pid || child.proc.exitCode !== null) return
  const exited = new Promise<void>((r) => child.proc.once('exit', () => r()))
  try {
    process.kill(-pid, 'SIGTERM')
  } catch {
    return
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // gone
    }
  }, graceMs)
  await exited
  clearTimeout(timer)
}

/** Polls `url` until it answers 200; throws with the child's log when it exits or times out. */
export async function waitForOk(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) break
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) })
      await res.body?.cancel()
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(250)
  }
  throw new Error(`${child.name} did not answer 200 at ${url}:\n${child.log.slice(-30).join('\n')}`)
}

/** Resident set size of a process in bytes, from /proc (Linux). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const m = /VmRSS:\s+(\d+) kB/.exec(status)
  return m ? Number(m[1]) * 1024 : 0
}

export const round = (v: number, digits = 2): number => Math.round(v * 10 ** digits) / 10 ** digits
