/**
 * Stoplight Prism's validating proxy (`prism proxy`) in front of a running stack: every request
 * and answer that passes through is checked against the served /openapi.json, and what does not
 * match comes back in the `sl-violations` header (`--errors=false`: the answer itself is passed
 * on unchanged). `through()` sends one operation's request via the proxy and records what Prism
 * said, so a test can assert that the walk found nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './ports.mjs'

const PRISM = fileURLToPath(new URL('../../node_modules/.bin/prism', import.meta.url))
const START_TIMEOUT_MS = 120_000

export interface Violation {
  location: string[]
  severity: string
  code: string | number
  message: string
}

export interface Operation {
  method: string
  path: string
}

export interface Passage {
  operationId: string
  status: number
  violations: Violation[]
}

type Document = { paths: Record<string, Record<string, { operationId: string }>> }

export interface Prism {
  url: string
  operations: Map<string, Operation>
  stop(): Promise<void>
}

/** Starts `prism proxy` for the document `baseUrl` serves, on a free port. */
export async function startPrism(baseUrl: string): Promise<Prism> {
  const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as Document
  const operations = new Map<string, Operation>()
  for (const [path, ops] of Object.entries(document.paths))
    for (const [method, op] of Object.entries(ops))
      operations.set(op.operationId, { method: method.toUpperCase(), path })
  const dir = mkdtempSync(join(tmpdir(), 'cutout-prism-'))
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(document))
  const port = await freePort()
  const args = ['proxy', file, baseUrl, '--errors=false', '--host', '127.0.0.1', '--port', String(port)]
  // Its own process group, so stop() ends Prism and anything it started.
  const child: ChildProcess = spawn(PRISM, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  child.stdout?.on('data', (d) => (output += d))
  child.stderr?.on('data', (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    try {
      process.kill(-(child.pid as number), 'SIGTERM')
    } catch {
      // already gone
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + START_TIMEOUT_MS
  while (!/Prism is listening/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`prism did not start:\n${output.slice(-2000)}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  return { url: `http://127.0.0.1:${port}`, operations, stop }
}

export interface CallOptions {
  params?: Record<string, string>
  query?: Record<string, string>
  body?: unknown
  headers?: Record<string, string>
  /** The bearer credential; none when undefined. */
  token?: string
}

/** The URL of an operation on `origin`, its path parameters filled in. */
export function operationUrl(origin: string, op: Operation, options: CallOptions): URL {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = options.params?.[name]
    if (value === undefined) throw new Error(`no value for {${name}} in ${op.path}`)
    return encodeURIComponent(value)
  })
  const url = new URL(path, origin)
  for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v)
  return url
}

/** Sends one operation's request to `origin` (the proxy, or the stack itself). */
export async function send(origin: string, op: Operation, options: CallOptions): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers['content-type'] ??= 'application/json'
  return fetch(operationUrl(origin, op, options), {
    method: op.method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    redirect: 'manual',
  })
}

/** What Prism said of one passage: the `sl-violations` header, parsed. */
export function violationsOf(res: Response): Violation[] {
  const header = res.headers.get('sl-violations')
  return header ? (JSON.parse(header) as Violation[]) : []
}
