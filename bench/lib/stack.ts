/**
 * Starts what the benchmarks measure, on their own ports and state directory (bench/.state,
 * gitignored), so a developer's `npm start` can keep running beside them:
 * - the inference server (`inference-server/src/main.ts`), the same way `npm start` runs it;
 * - `wrangler dev` for the Worker, with local D1/R2/Durable Objects persisted under bench/.state,
 *   migrations applied and one workspace + API key seeded with `wrangler d1 execute --local`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { promisify } from 'node:util'
import { MALLOC_ENV } from '../../inference-server/src/segmentation/session-memory'
import { buildWeb } from '../../scripts/build-web'
import { guardInspector, type InspectorGuard } from '../../scripts/lib/inspector-guard'
import { freePort, ROOT, startChild, stopChild, waitForOk, type Child } from './util.js'

const run = promisify(execFile)
const WRANGLER = `${ROOT}node_modules/wrangler/bin/wrangler.js`
const QUIET_WRANGLER = { WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' }

export interface InferenceServer {
  url: string
  child: Child
  signingKey: string
  stop(): Promise<void>
}

const withoutUnset = (env: Record<string, string | undefined>): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined))

/**
 * Spawns the inference server and waits for `/health/ready`. `env` goes on top of this process's
 * environment and MALLOC_ENV; a name set to undefined is left out (bench/malloc.ts: without it).
 */
export async function startInference(
  env: Record<string, string | undefined> = {},
  verbose = false,
  /** A restart: the same port and key as the run it replaces. */
  again?: { port: number; signingKey: string },
): Promise<InferenceServer> {
  const port = again?.port ?? (await freePort())
  const signingKey = again?.signingKey ?? randomBytes(32).toString('base64url')
  const child = startChild(
    'inference',
    process.execPath,
    ['--import', 'tsx', 'inference-server/src/main.ts'],
    withoutUnset({
      ...MALLOC_ENV,
      ...process.env,
      ONNXRUNTIME_NODE_INSTALL: 'skip',
      PORT: String(port),
      HOST: '127.0.0.1',
      INFERENCE_SIGNING_KEY: signingKey,
      ...env,
    }),
    verbose,
  )
  const url = `http://127.0.0.1:${port}`
  await waitForOk(`${url}/health/ready`, child, 180_000)
  return { url, child, signingKey, stop: () => stopChild(child) }
}

export interface ApiStack {
  url: string
  apiKey: string
  /** The Worker's DevTools port (`wrangler dev --inspector-port`): heap usage, profiles. */
  inspectorPort: number
  /**
   * The DevTools session on it that keeps network inspection off, as `npm start` does
   * (scripts/lib/inspector-guard.ts); the one client the inspector admits, so read the heap through it.
   */
  devtools: InspectorGuard
  child: Child
  stop(): Promise<void>
  /**
   * Stops `wrangler dev` and starts it again on the same port and state (what a developer's
   * restart does), after `downMs` with nothing listening.
   */
  restart(downMs?: number): Promise<void>
}

export interface ApiOptions {
  /** More Worker vars (deadlines, rate limits) for this run. */
  vars?: Record<string, string>
  /** Scopes of the seeded key (default images:write, jobs:read). */
  scopes?: string[]
  verbose?: boolean
}

async function wrangler(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...QUIET_WRANGLER, CI: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  })
  return stdout
}

/**
 * `wrangler dev` against `inference`, with fresh local state and a seeded API key (10,000 credits).
 */
export async function startApi(inference: InferenceServer, options: ApiOptions | boolean = {}): Promise<ApiStack> {
  const {
    vars: extraVars = {},
    scopes: keyScopes = ['images:write', 'jobs:read'],
    verbose = false,
  } = typeof options === 'boolean' ? { verbose: options } : options
  // wrangler.toml serves web/dist as assets and refuses to start without it (a fresh checkout).
  await buildWeb()
  const state = `${ROOT}bench/.state/wrangler`
  rmSync(state, { recursive: true, force: true })
  mkdirSync(state, { recursive: true })
  await wrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', state])

  const workspaceId = randomUUID()
  const apiKey = `sk_live_${randomBytes(32).toString('base64url')}`
  const hash = createHash('sha256').update(apiKey).digest('hex')
  const periodEnd = new Date(Date.now() + 30 * 86_400_000).toISOString()
  const scopes = JSON.stringify(keyScopes)
  await wrangler([
    'd1',
    'execute',
    'DB',
    '--local',
    '--persist-to',
    state,
    '--command',
    [
      `INSERT INTO workspaces (id, name) VALUES ('${workspaceId}', 'Bench')`,
      `INSERT INTO credit_accounts (workspace_id, credit_limit, period_ends_at) VALUES ('${workspaceId}', 10000, '${periodEnd}')`,
      `INSERT INTO api_keys (id, workspace_id, name, prefix, hash, scopes) VALUES ('${randomUUID()}', '${workspaceId}', 'bench', '${apiKey.slice(0, 12)}', '${hash}', '${scopes}')`,
    ].join('; '),
  ])

  const port = await freePort()
  const inspector = await freePort()
  const vars: Record<string, string> = {
    ENVIRONMENT: 'development',
    INFERENCE_URL: inference.url,
    INFERENCE_SIGNING_KEY: inference.signingKey,
    RESULT_SIGNING_KEY: randomBytes(32).toString('base64url'),
    DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
    SSRF_ALLOWLIST: '127.0.0.1',
    ...extraVars,
  }
  const args = [
    WRANGLER,
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspector),
    '--persist-to',
    state,
    '--log-level',
    'warn',
  ]
  for (const [name, value] of Object.entries(vars)) args.push('--var', `${name}:${value}`)
  const url = `http://127.0.0.1:${port}`
  const launch = async () => {
    const child = startChild('wrangler', process.execPath, args, { ...process.env, ...QUIET_WRANGLER }, verbose)
    await waitForOk(`${url}/health/live`, child, 120_000).catch(async (err) => {
      await stopChild(child)
      throw err
    })
    return child
  }
  const child = await launch()
  const devtools = await guardInspector(inspector, { log: (m) => console.log(`[bench] ${m}`) })
  const stack: ApiStack = {
    url,
    apiKey,
    inspectorPort: inspector,
    devtools,
    child,
    stop: () => {
      devtools.close()
      return stopChild(stack.child)
    },
    async restart(downMs = 0) {
      await stopChild(stack.child)
      await new Promise((resolve) => setTimeout(resolve, downMs))
      stack.child = await launch()
    },
  }
  return stack
}
