/**
 * The real local stack for end-to-end tests of clients (SDK, CLI): `npm start` (scripts/start.ts:
 * migrations, the seeded development key, the inference server with the real model, `wrangler
 * dev`) on free ports with its own local state in a temporary directory. `stop()` ends its process
 * group and removes the state.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './ports.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const START_TIMEOUT_MS = 400_000

export interface LocalStack {
  baseUrl: string
  /** The seeded development API key (all scopes, 1000 credits). */
  apiKey: string
  /** What `npm start` printed so far (for failure messages). */
  output(): string
  /** The same, appended to this file as it comes: for a test file in another process (shared-stack.ts). */
  outputFile: string
  /** The `npm start` process (its own process group), its two servers' ports and its state directory. */
  process: ChildProcess
  ports: { edge: number; inference: number }
  stateDir: string
  /** Ends the process group (SIGTERM, then SIGKILL to what is left) and removes the state. */
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Processes whose command line mentions `dir` (wrangler's --persist-to), left behind by a crash. */
export function processesUsing(dir: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.push(Number(entry))
    } catch {
      // gone
    }
  }
  return pids
}

/**
 * Request-rate windows of the stacks tests start: 5 s, not production's minute, so a test that
 * spends its address's requests (web/test/page.test.ts) waits seconds for the next window. Any 5 s
 * window lies inside one minute's, so nothing is refused that a minute's window would serve.
 */
const TEST_RATE_WINDOW_SECONDS = '5'

/** `extraEnv`: settings for `npm start` (e.g. the Worker's inference deadlines, which it passes on). */
export async function startLocalStack(extraEnv: Record<string, string> = {}): Promise<LocalStack> {
  const stateDir = mkdtempSync(join(tmpdir(), 'cutout-client-e2e-'))
  const ports = { edge: await freePort(), inference: await freePort() }
  const env = {
    ...process.env,
    RATE_LIMIT_WINDOW_SECONDS: TEST_RATE_WINDOW_SECONDS,
    ...extraEnv,
    PORT: String(ports.edge),
    INFERENCE_PORT: String(ports.inference),
    LOCAL_STATE_DIR: stateDir,
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  }
  // Its own process group, so stop() reaches npm, scripts/start.ts and both servers.
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let output = ''
  const outputFile = join(stateDir, 'npm-start.log')
  const append = (d: Buffer) => {
    output += d
    try {
      appendFileSync(outputFile, d)
    } catch {
      // The state directory is gone: stop() removed it, and what comes after is only kept above.
    }
  }
  child.stdout!.on('data', append)
  child.stderr!.on('data', append)

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGTERM')
      } catch {
        // already gone
      }
      // The bound's timer is cleared once the stack has exited: a pending 20 s timer kept vitest's
      // process alive past its teardown, which then waited out its own 10 s close timeout.
      let bound: NodeJS.Timeout | undefined
      await Promise.race([exited, new Promise((resolve) => (bound = setTimeout(resolve, 20_000)))])
      clearTimeout(bound)
    }
    for (const pid of processesUsing(stateDir)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
    }
    rmSync(stateDir, { recursive: true, force: true })
  }

  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    const base = /^Base URL: (http\S+)$/m.exec(output)
    const key = /^API key: (sk_live_\S+)$/m.exec(output)
    if (base && key)
      return {
        baseUrl: base[1],
        apiKey: key[1],
        output: () => output,
        outputFile,
        process: child,
        ports,
        stateDir,
        stop,
      }
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`npm start did not print a Base URL and API key:\n${output.split('\n').slice(-40).join('\n')}`)
    }
    await sleep(250)
  }
}

/** Signs in by email through the local dev outbox; returns the session's tokens. */
export async function signInByEmail(
  baseUrl: string,
  email: string,
): Promise<{ accessToken: string; refreshToken: string; expiresIn: number }> {
  // 127.0.0.1's anonymous requests share one rate window with the tests before (a page's among
  // them): a 429 is waited out as any client would, a few times.
  const post = async (path: string, body: unknown) => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(new URL(path, baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      if (res.status !== 429 || attempt === 4) return res
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000 + 250)
    }
  }
  const started = await post('/v1/auth/email/start', { email })
  if (started.status !== 202) throw new Error(`email start: ${started.status} ${await started.text()}`)
  const verified = await post('/v1/auth/email/verify', { email, code: await outboxCode(baseUrl, email) })
  if (verified.status !== 200) throw new Error(`email verify: ${verified.status} ${await verified.text()}`)
  return (await verified.json()) as { accessToken: string; refreshToken: string; expiresIn: number }
}

/** The code of the newest sign-in email to `email` in the local stack's dev outbox. */
export async function outboxCode(baseUrl: string, email: string): Promise<string> {
  const outbox = await fetch(new URL(`/v1/dev/outbox?to=${encodeURIComponent(email)}`, baseUrl))
  const { messages } = (await outbox.json()) as { messages: { text: string }[] }
  const code = messages[0]?.text.match(/\b(\d{6})\b/)?.[1]
  if (!code) throw new Error(`no sign-in code for ${email}`)
  return code
}
