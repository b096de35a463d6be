/**
 * What the workerd processes of a `wrangler dev` use, read from /proc: resident memory, open file
 * descriptors and how many of them are sockets. wrangler 4 runs two: its proxy (the one that
 * serves the Worker's port and hosts the inspector proxy) and the Worker's runtime.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

export interface WorkerdUsage {
  /** Resident memory of all of them, in bytes. */
  rss: number
  /** Open file descriptors of all of them. */
  fds: number
  /** Of those, sockets. */
  sockets: number
}

/** Every process under `pid` (wrangler starts workerd as a child). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {}
  }
  const all: number[] = []
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c)
      walk(c)
    }
  }
  walk(pid)
  return all
}

function fdsOf(pid: number): { fds: number; sockets: number } {
  let fds = 0
  let sockets = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    fds++
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++
    } catch {}
  }
  return { fds, sockets }
}

/** The workerd processes wrangler (`root`) runs, together. */
export function workerdUsage(root: number): WorkerdUsage {
  const usage: WorkerdUsage = { rss: 0, fds: 0, sockets: 0 }
  for (const pid of descendants(root)) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('workerd')) continue
      const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)
      if (line) usage.rss += Number(line[1]) * 1024
      const { fds, sockets } = fdsOf(pid)
      usage.fds += fds
      usage.sockets += sockets
    } catch {}
  }
  return usage
}
