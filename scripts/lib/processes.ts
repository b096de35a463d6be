/**
 * Child processes for `npm start`: each runs in its own process group (so a stop reaches the
 * wrangler CLI, workerd and anything else they spawn), with its output prefixed line by line.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'

export interface Child {
  name: string
  proc: ChildProcess
  /** Resolves with the exit code (or 128 + signal number style code when killed by a signal). */
  exited: Promise<number>
  done: boolean
}

const SIGNAL_CODES: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }

/** Starts `command` in a new process group, piping stdout/stderr through `[prefix] ` lines. */
export function startChild(
  name: string,
  prefix: string,
  command: string,
  args: string[],
  options: SpawnOptions,
): Child {
  const proc = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  for (const stream of [proc.stdout, proc.stderr]) {
    if (!stream) continue
    const out = stream === proc.stderr ? process.stderr : process.stdout
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => out.write(`${prefix} ${line}\n`))
  }
  const child: Child = { name, proc, done: false, exited: Promise.resolve(0) }
  child.exited = new Promise<number>((resolve) => {
    proc.once('error', (err) => {
      process.stderr.write(`${prefix} failed to start: ${err.message}\n`)
      child.done = true
      resolve(1)
    })
    proc.once('exit', (code, signal) => {
      child.done = true
      resolve(code ?? 128 + (signal ? (SIGNAL_CODES[signal] ?? 0) : 0))
    })
  })
  return child
}

function signalGroup(child: Child, signal: NodeJS.Signals): void {
  if (!child.proc.pid) return
  try {
    process.kill(-child.proc.pid, signal)
  } catch {
    // the group is gone already
  }
}

/** Whether any process of the child's group is still alive. */
export function groupAlive(child: Child): boolean {
  if (!child.proc.pid) return false
  try {
    process.kill(-child.proc.pid, 0)
    return true
  } catch {
    return false
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * SIGTERM to the whole group, then SIGKILL to whatever of the group is left after `graceMs`.
 * Waits for the leader to exit and for the group to be empty.
 */
export async function stopChild(child: Child, graceMs = 8000): Promise<void> {
  signalGroup(child, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline && (!child.done || groupAlive(child))) await sleep(100)
  if (!child.done || groupAlive(child)) {
    signalGroup(child, 'SIGKILL')
    const hard = Date.now() + 3000
    while (Date.now() < hard && (!child.done || groupAlive(child))) await sleep(50)
  }
}

/** Runs a command to completion, capturing its output (for the wrangler d1 one-offs). */
export function runCaptured(
  command: string,
  args: string[],
  options: SpawnOptions,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    proc.stdout?.on('data', (d) => (stdout += d))
    proc.stderr?.on('data', (d) => (stderr += d))
    proc.once('error', (err) => resolve({ code: 1, stdout, stderr: stderr + err.message }))
    proc.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }))
  })
}

/** True when nothing listens on host:port (we can bind it ourselves). */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, host, () => srv.close(() => resolve(true)))
  })
}

/** A port on host that nothing listens on now, chosen by the OS. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

/**
 * Polls `url` until it answers 200, the child exits, or the time is up. Returns whether it answered.
 */
export async function waitForOk(url: string, child: Child, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && !child.done && !signal.aborted) {
    try {
      // Generous per-attempt timeout: wrangler holds early requests until workerd is up, and an
      // aborted one makes workerd log a "Broken pipe" error.
      const res = await fetch(url, { signal: AbortSignal.timeout(20_000) })
      await res.arrayBuffer() // read it all: a cancelled body makes workerd log "Broken pipe"
      if (res.status === 200) return true
    } catch {
      // not listening yet
    }
    await sleep(300)
  }
  return false
}

/** Parent pid and command line of a process, from /proc (Linux); undefined elsewhere or when gone. */
function procInfo(pid: number): { ppid: number; cmd: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
    return { ppid, cmd }
  } catch {
    return undefined
  }
}

/**
 * The launchers between us and `npm start` (the tsx CLI, `sh -c`, npm itself). `kill <npm pid>`
 * reaches `sh`, which does not pass it on, so we watch these and stop when one of them is gone.
 * Without /proc, only the direct parent is watched.
 */
export function launcherPids(): number[] {
  const pids = [process.ppid]
  let info = procInfo(process.ppid)
  if (!info) return pids
  for (let depth = 0; depth < 4 && info; depth++) {
    if (/\bnpm(-cli\.js)?\b/.test(info.cmd)) return pids
    if (info.ppid <= 1) break
    pids.push(info.ppid)
    info = procInfo(info.ppid)
  }
  return [process.ppid]
}

/** Calls `onGone` once when any of `pids` has exited (or we were re-parented). */
export function watchLaunchers(pids: number[], onGone: () => void): void {
  const firstParent = process.ppid
  const timer = setInterval(() => {
    const gone =
      process.ppid !== firstParent ||
      pids.some((pid) => {
        try {
          process.kill(pid, 0)
          return false
        } catch {
          return true
        }
      })
    if (gone) {
      clearInterval(timer)
      onGone()
    }
  }, 500)
  timer.unref()
}
