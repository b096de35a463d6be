/**
 * `npm run deploy:check`: bundles the Worker exactly as `wrangler deploy` would (`wrangler deploy
 * --dry-run` with this repository's wrangler.toml, nothing is uploaded) and fails when the bundle
 * would not run or not be accepted on Cloudflare:
 *
 * - an import the Workers runtime does not provide: anything left external but `cloudflare:*`
 *   (a Node built-in such as `node:fs` or `child_process` resolves under `nodejs_compat` to a stub
 *   that throws when called, so it would fail in production while `wrangler dev` on Node looks
 *   fine), or a bundled polyfill from `unenv` (the same stubs, inlined);
 * - a compressed size over the Workers Free plan's 3 MiB (Paid allows 10 MiB; we hold ourselves to
 *   the smaller one so the service deploys on either plan).
 *
 * Limits are Cloudflare's published ones (developers.cloudflare.com/workers/platform/limits/):
 * Worker size 3 MiB (Free) / 10 MiB (Paid) after gzip, start-up 1 s, memory 128 MB per isolate.
 * `npm test` runs this as its `deploy` stage. The web page (web/dist) is built first because
 * wrangler.toml's `[assets]` directory must exist for wrangler to bundle at all.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Workers Free plan's limit on the compressed Worker (the stricter of the two plans). */
export const WORKER_SIZE_LIMIT_BYTES = 3 * 1024 * 1024

/**
 * Node built-ins the Worker may import. Empty: the Worker uses Web APIs only, and each addition
 * must be a module workerd implements in full (not an unenv stub) — say which in the comment.
 */
export const ALLOWED_NODE_IMPORTS: readonly string[] = []

export interface BundleReport {
  /** Bundle entry file, relative to the output directory. */
  entry: string
  bytes: number
  gzipBytes: number
  /** Imports esbuild left for the runtime to resolve. */
  externalImports: string[]
  /** Bundled inputs that are Node polyfills (stubs that throw in production). */
  polyfills: string[]
}

interface Metafile {
  inputs: Record<string, unknown>
  outputs: Record<string, { bytes: number; imports?: { path: string; external?: boolean }[]; entryPoint?: string }>
}

/** Runs `wrangler deploy --dry-run` for the project at `cwd` and reads what it bundled. */
export function bundleWorker(cwd: string, config = 'wrangler.toml'): BundleReport {
  const outdir = mkdtempSync(join(tmpdir(), 'cutout-deploy-check-'))
  try {
    const wrangler = join(root, 'node_modules', '.bin', 'wrangler')
    const args = ['deploy', '--dry-run', '--config', config, '--outdir', outdir, '--metafile']
    const run = spawnSync(wrangler, args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
    })
    if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${run.stdout}\n${run.stderr}`)
    const meta = JSON.parse(readFileSync(join(outdir, 'bundle-meta.json'), 'utf8')) as Metafile
    const [name, output] = Object.entries(meta.outputs).find(([file]) => !file.endsWith('.map')) ?? []
    if (!name || !output) throw new Error('wrangler wrote no bundle')
    const code = readFileSync(join(outdir, name.split('/').pop() as string))
    return {
      entry: name.split('/').pop() as string,
      bytes: code.length,
      gzipBytes: gzipSync(code, { level: 9 }).length,
      externalImports: [...new Set((output.imports ?? []).filter((i) => i.external).map((i) => i.path))].sort(),
      polyfills: Object.keys(meta.inputs).filter((input) => /node_modules\/(@cloudflare\/)?unenv/.test(input)),
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}

/** What is wrong with a bundle, one sentence each; empty when it would deploy and run. */
export function bundleProblems(report: BundleReport, limitBytes = WORKER_SIZE_LIMIT_BYTES): string[] {
  const problems: string[] = []
  const runtimeOnly = (path: string) => path.startsWith('cloudflare:') || ALLOWED_NODE_IMPORTS.includes(path)
  for (const path of report.externalImports.filter((p) => !runtimeOnly(p)))
    problems.push(`imports "${path}", which the Workers runtime does not provide (Node-only)`)
  for (const input of report.polyfills)
    problems.push(`bundles the Node polyfill ${input}, a stub that throws on Workers`)
  if (report.gzipBytes > limitBytes)
    problems.push(`is ${report.gzipBytes} bytes compressed, over the limit of ${limitBytes} bytes (${mib(limitBytes)})`)
  return problems
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`

async function main(): Promise<void> {
  const { buildWeb } = await import('./build-web')
  await buildWeb()
  const report = bundleWorker(root)
  const problems = bundleProblems(report)
  console.log(
    `Worker bundle: ${mib(report.bytes)}, ${mib(report.gzipBytes)} gzip (limit ${mib(WORKER_SIZE_LIMIT_BYTES)}); ` +
      `runtime imports: ${report.externalImports.join(', ') || 'none'}`,
  )
  for (const problem of problems) console.error(`✘ the Worker ${problem}`)
  process.exit(problems.length ? 1 : 0)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main()
