/**
 * `npm start`: local mode (DESIGN.md §1). Applies the D1 migrations, builds the web page (web/ →
 * web/dist, served by the Worker's static assets), seeds a development workspace with credits and
 * an API key on first run, starts the inference server and `wrangler dev`, and prints `Base URL: …`,
 * `Web page: …`, `API key: …` and a "Try it" (scripts/lib/start-banner.ts). Ctrl-C / SIGTERM stops both (exit 0). An inference server that
 * dies is restarted with backoff while the Worker stays up (scripts/lib/supervise.ts); if
 * `wrangler dev` dies, the inference server is stopped and this exits non-zero.
 *
 * Environment: PORT (Worker, default 8787), INFERENCE_PORT (default 7071),
 * LOCAL_STATE_DIR (where wrangler keeps local D1/R2/Durable Objects, default .wrangler/state;
 * the end-to-end test points it at a temporary directory), DNS_RESOLVER_URL (the DNS-over-HTTPS
 * JSON endpoint the SSRF guard resolves names with; default wrangler.toml's public resolver).
 * The Worker's inference deadlines and retries (INFERENCE_READY_TIMEOUT_MS, INFERENCE_DEADLINE_*,
 * INFERENCE_MAX_ATTEMPTS, INFERENCE_RETRY_BASE_MS, INFERENCE_RETRY_AFTER_MAX_MS; src/services/deadlines.ts),
 * RATE_LIMIT_WINDOW_SECONDS and ANONYMOUS_DAILY_REMOVALS (src/config.ts) pass through when set.
 * wrangler's inspector listens on a free port of its own (printed at start) for Chrome DevTools;
 * wrangler 4.164 enables network inspection only while DevTools is attached, so no guard holds it
 * off any more (docs/decisions.md "Local mode: `npm start`"). `scripts/check-node.mjs` runs first (package.json).
 * Secrets never go on a command line: they live in .wrangler/dev-secrets.json and .dev.vars.
 */
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type DevKeyState, loadOrCreateSecrets, readKeyState, writeDevVars } from './lib/local-state'
import { buildWeb } from './build-web'
import { startBanner } from './lib/start-banner'
import {
  freePort,
  launcherPids,
  portFree,
  runCaptured,
  startChild,
  stopChild,
  waitForOk,
  watchLaunchers,
  type Child,
} from './lib/processes'
import { supervise } from './lib/supervise'
import { MALLOC_ENV } from '../inference-server/src/segmentation/session-memory'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const HOST = '127.0.0.1'
const INFERENCE_READY_TIMEOUT_MS = 300_000 // first run reassembles the model from the package
const EDGE_READY_TIMEOUT_MS = 120_000

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    fail(`Expected a port number (1–65535) in ${name} but received ${JSON.stringify(raw)}`)
  }
  return port
}

/** An http(s) URL from the environment, or undefined when the variable is unset or empty. */
function urlFromEnv(name: string): string | undefined {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return undefined
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    fail(`Expected an http(s) URL in ${name} but received ${JSON.stringify(raw)}`)
  }
  return raw
}

function fail(message: string): never {
  process.stderr.write(`[start] ${message}\n`)
  process.exit(1)
}

const log = (message: string) => process.stdout.write(`[start] ${message}\n`)

const edgePort = portFromEnv('PORT', 8787)
const inferencePort = portFromEnv('INFERENCE_PORT', 7071)
const dnsResolverUrl = urlFromEnv('DNS_RESOLVER_URL')
/** Worker settings passed on as `--var`s when set (tests and benchmarks shorten them: deadlines, rate windows, allowances). */
const WORKER_TUNING = [
  'INFERENCE_READY_TIMEOUT_MS',
  'INFERENCE_DEADLINE_BASE_MS',
  'INFERENCE_DEADLINE_PER_MP_MS',
  'INFERENCE_DEADLINE_MAX_MS',
  'INFERENCE_MAX_ATTEMPTS',
  'INFERENCE_RETRY_BASE_MS',
  'INFERENCE_RETRY_AFTER_MAX_MS',
  'RATE_LIMIT_WINDOW_SECONDS',
  'ANONYMOUS_DAILY_REMOVALS',
] as const
const workerTuning = WORKER_TUNING.flatMap((name) => {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return []
  if (!/^\d+$/.test(raw)) fail(`Expected a whole number in ${name} but received ${JSON.stringify(raw)}`)
  return ['--var', `${name}:${raw}`]
})
const stateDir = resolve(ROOT, process.env.LOCAL_STATE_DIR || '.wrangler/state')
const secretsPath = join(ROOT, '.wrangler', 'dev-secrets.json')
const devVarsPath = join(ROOT, '.dev.vars')
const keyStatePath = join(stateDir, 'dev-api-key.json')

const require = createRequire(import.meta.url)
const wranglerCli = join(dirname(require.resolve('wrangler/package.json')), 'wrangler-dist', 'cli.js')
const nodeForWrangler = [process.execPath, '--no-warnings', '--experimental-vm-modules', wranglerCli] as const

/** Environment for every child: no calls to Cloudflare from local mode. */
const childEnv: NodeJS.ProcessEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
}
// Ours, not the children's: wrangler would read PORT itself, and the inference server reads PORT.
delete childEnv.PORT
delete childEnv.INFERENCE_PORT
delete childEnv.LOCAL_STATE_DIR
delete childEnv.DNS_RESOLVER_URL

/**
 * Migrates and seeds the local D1 in a process of its own (scripts/prepare-database.ts): it loads
 * wrangler's module, whose import registers SIGINT/SIGTERM handlers that exit at once, which here
 * would leave both servers running. Returns the development key it seeded.
 */
async function prepareDatabase(): Promise<DevKeyState> {
  const res = await runCaptured(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'prepare-database.ts')], {
    cwd: ROOT,
    env: { ...childEnv, LOCAL_STATE_DIR: stateDir },
  })
  process.stdout.write(res.stdout)
  if (res.code !== 0) {
    process.stderr.write(res.stderr)
    fail(`preparing the local D1 database failed (exit ${res.code})`)
  }
  const key = readKeyState(keyStatePath)
  if (!key) fail(`preparing the local D1 database left no key in ${keyStatePath}`)
  return key
}

const children: Child[] = []
/** The inference server's current run (supervised: a new one after each restart). */
let inferenceRun: Child | undefined
let shuttingDown = false

async function shutdown(code: number, reason: string): Promise<never> {
  if (!shuttingDown) {
    shuttingDown = true
    log(`${reason}; stopping…`)
    const running = [...children, ...(inferenceRun ? [inferenceRun] : [])]
    await Promise.all(running.filter((c) => c.proc.pid).map((c) => stopChild(c)))
    log('stopped')
    process.exit(code)
  }
  return new Promise<never>(() => {})
}

const aborter = new AbortController()
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    aborter.abort()
    void shutdown(0, `${signal} received`)
  })
}

// `kill <npm pid>` stops npm and its `sh -c` but never reaches us: stop when a launcher is gone.
watchLaunchers(launcherPids(), () => {
  aborter.abort()
  void shutdown(0, 'npm exited')
})

function watch(child: Child): void {
  void child.exited.then((code) => {
    if (!shuttingDown) void shutdown(code === 0 ? 1 : code, `${child.name} exited with code ${code}`)
  })
}

async function main(): Promise<void> {
  for (const [name, port] of [
    ['PORT', edgePort],
    ['INFERENCE_PORT', inferencePort],
  ] as const) {
    if (!(await portFree(port, HOST))) fail(`port ${port} on ${HOST} is in use: stop what holds it or set ${name}`)
  }
  if (edgePort === inferencePort) fail('PORT and INFERENCE_PORT must differ')

  const secrets = loadOrCreateSecrets(secretsPath)
  writeDevVars(devVarsPath, secrets)
  // The inference server loads its model while D1 is migrated and seeded and wrangler dev starts:
  // none of them needs another.
  const inferenceReadyUrl = `http://${HOST}:${inferencePort}/health/ready`
  let firstRun: (child: Child) => void = () => {}
  const inferenceStarted = new Promise<Child>((resolve) => (firstRun = resolve))
  void supervise({
    name: 'inference server',
    start: () =>
      startChild('inference server', '[inference]', process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: join(ROOT, 'inference-server'),
        // MALLOC_ENV: glibc's setting that keeps ~350 MB less resident (session-memory.ts); one set by the user wins.
        env: {
          ...MALLOC_ENV,
          ...childEnv,
          PORT: String(inferencePort),
          HOST,
          INFERENCE_SIGNING_KEY: secrets.INFERENCE_SIGNING_KEY,
        },
      }),
    ready: (child) => waitForOk(inferenceReadyUrl, child, INFERENCE_READY_TIMEOUT_MS, aborter.signal),
    onStart: (child) => {
      inferenceRun = child // the one a shutdown stops; earlier runs have exited
      log(`inference server started (pid ${child.proc.pid})`)
      firstRun(child)
    },
    stopping: () => shuttingDown,
    log,
  })
  const key = await prepareDatabase()
  await buildWeb()
  log('web page built (web/dist)')
  if (aborter.signal.aborted) return

  // wrangler dev starts while the model may still be loading; the banner waits for both.
  const inspectorPort = await freePort(HOST)
  const edge = startEdge(inspectorPort)
  const baseUrl = `http://${HOST}:${edgePort}`
  const inference = await inferenceStarted
  log(`waiting for the inference server on http://${HOST}:${inferencePort} (model load takes a few seconds)…`)
  const [inferenceReady, edgeReady] = await Promise.all([
    waitForOk(inferenceReadyUrl, inference, INFERENCE_READY_TIMEOUT_MS, aborter.signal),
    waitForOk(`${baseUrl}/health/live`, edge, EDGE_READY_TIMEOUT_MS, aborter.signal),
  ])
  if (!inferenceReady || !edgeReady) {
    const what = inferenceReady
      ? 'wrangler dev did not answer /health/live'
      : 'the inference server did not become ready'
    if (!shuttingDown) await shutdown(1, what)
    return
  }
  log(`wrangler's inspector for Chrome DevTools: 127.0.0.1:${inspectorPort}`)

  process.stdout.write(startBanner({ baseUrl, apiKey: key.apiKey, root: ROOT }))
}

/** `wrangler dev` on the local state, pointed at the inference server; watched, so its exit stops both. */
function startEdge(inspectorPort: number): Child {
  const [node, ...pre] = nodeForWrangler
  const edge = startChild(
    'wrangler dev',
    '[edge]',
    node,
    [
      ...pre,
      'dev',
      '--ip',
      HOST,
      '--port',
      String(edgePort),
      '--persist-to',
      stateDir,
      '--inspector-port',
      String(inspectorPort),
      '--var',
      `INFERENCE_URL:http://${HOST}:${inferencePort}`,
      // Unset: wrangler.toml's DNS_RESOLVER_URL (the production default) applies.
      ...(dnsResolverUrl ? ['--var', `DNS_RESOLVER_URL:${dnsResolverUrl}`] : []),
      ...workerTuning,
      '--show-interactive-dev-session=false',
    ],
    { cwd: ROOT, env: childEnv },
  )
  children.push(edge)
  watch(edge)
  return edge
}

main().catch((err) => {
  process.stderr.write(`[start] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  void shutdown(1, 'start failed')
})
