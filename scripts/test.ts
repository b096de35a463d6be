/**
 * `npm test`: every stage (lint and format, typecheck, the deploy check, inference server, OpenAPI
 * contract, Worker in workerd, and end to end: local mode, the SDK, CLI, MCP server, Python
 * client, Prism's contract walk, the page and the fault tests against one `npm start`), in the
 * lanes below. A failing stage does not stop the later ones, so one run shows everything that is
 * broken; the exit code is non-zero when any stage failed.
 *
 * Stages run their tools directly (not through nested `npm run`), so a passing run prints what
 * passed and not npm's per-invocation config warnings.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildWeb, WEB_PREBUILT_ENV } from './build-web'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name: string) => join(root, 'node_modules', '.bin', name)

interface Step {
  command: string
  args: string[]
  cwd?: string
  /** Where a vitest step writes its JSON report, read back for the failure summary. */
  report?: string
}
/** A stage's steps run in order, each after the last, except in the checks before the lanes (CHECKS). */
type Stage = { name: string; steps: Step[] }

/** Reassembles the model and builds its verified size-agnostic graph; a no-op once they are cached. */
const prepareModel: Step = {
  command: bin('tsx'),
  args: ['src/segmentation/prepare-model.ts'],
  cwd: join(root, 'inference-server'),
}

const reports = mkdtempSync(join(tmpdir(), 'cutout-test-reports-'))
let reportCount = 0
/** `reporters`: more reporters beside the default and the JSON one the failure summary reads. */
const vitest = (args: string[], reporters: string[] = []): Step => {
  const report = join(reports, `${++reportCount}.json`)
  return {
    command: bin('vitest'),
    args: [
      'run',
      ...args,
      '--reporter=default',
      '--reporter=json',
      ...reporters.map((r) => `--reporter=${r}`),
      `--outputFile.json=${report}`,
    ],
    report,
  }
}
/**
 * Type checks run TypeScript 7's native compiler (`typescript` 7.0, installed as `typescript-7`: the
 * same checker ported to Go, ~5× faster here than `tsc` 5.9 on these projects with the same errors;
 * docs/decisions.md "Exact pins, and the Workers test plugin"). `tsc` 5.9 stays for what emits (the SDK's and CLI's
 * builds) and for the tools that load the compiler as a library (openapi-typescript, whose peer
 * range is ^5, and dpdm): TypeScript 7's package has no such API.
 */
const tsc7 = join(root, 'node_modules', 'typescript-7', 'bin', 'tsc')
const typeCheck = (project: string): Step => ({ command: tsc7, args: ['--noEmit', '-p', project] })

const STAGES: Stage[] = [
  // Format and lint, no import cycle at run time (scripts/check-cycles.ts) and the
  // OpenAPI document through Redocly's recommended rules (scripts/lint-openapi.ts, redocly.yaml).
  {
    name: 'lint',
    steps: [
      { command: bin('tsx'), args: ['scripts/check-cycles.ts'] },
      { command: bin('tsx'), args: ['scripts/lint-openapi.ts'] },
      { command: bin('biome'), args: ['ci', '.'] },
    ],
  },
  // The Worker (src, Worker tests), the inference server (src, tests) and Node-side code
  // (scripts, bench, end-to-end tests, test helpers) each have their own compiler settings.
  // They share CHECKS' two slots with the other checks.
  {
    name: 'typecheck',
    steps: [
      typeCheck('tsconfig.json'),
      typeCheck('tsconfig.node.json'),
      typeCheck('inference-server/tsconfig.json'),
      { command: bin('tsx'), args: ['scripts/check-worker-types.ts'] },
      typeCheck('sdk/tsconfig.json'),
      typeCheck('sdk/tsconfig.node.json'),
      typeCheck('cli/tsconfig.json'),
      typeCheck('web/tsconfig.json'),
    ],
  },
  // The Worker bundled as `wrangler deploy` would: no Node-only import, within the size limit.
  { name: 'deploy', steps: [{ command: bin('tsx'), args: ['scripts/deploy-check.ts'] }] },
  // The model reassembled and its size-agnostic graph built and verified against it on a fresh
  // clone (~5 s when the rewrite is one already checked on this runtime, verified-graphs.ts; over
  // a minute when the check must run), once, before anything loads it: otherwise the first stack's
  // inference server and the inference tests would each do it, side by side.
  { name: 'model', steps: [prepareModel] },
  {
    name: 'inference',
    // prepareModel for `npm test -- inference` alone, rather than inside the first test file's
    // beforeAll; dropped when the model stage runs in the same `npm test` (below).
    steps: [prepareModel, { ...vitest([]), cwd: join(root, 'inference-server') }],
  },
  { name: 'contract', steps: [vitest(['--config', 'vitest.contract.config.mts'])] },
  // The stalled-run reporter ends a run the pool never reports the end of (test/helpers/stalled-run.ts).
  {
    name: 'worker',
    steps: [vitest(['--config', 'vitest.worker.config.mts'], ['./test/helpers/stalled-run.ts'])],
  },
  // Local mode end to end, then the SDK and CLI as users get them (built), the MCP server, the
  // Python client (`/usr/bin/python3 -m pytest clients/python`, run by test/clients/python.test.ts),
  // the contract walk through Prism's validating proxy (test/clients/prism.test.ts) and the page,
  // all against one local stack (test/helpers/e2e-stack.ts); last, that stack's inference server
  // killed and frozen, then `npm start` stopped by SIGTERM (test/e2e/faults.test.ts).
  {
    name: 'e2e',
    steps: [
      // Build mode: after `npm ci` (whose `prepare` builds both) or an unchanged tree it finds
      // the builds up to date from their dist/.tsbuildinfo and checks nothing again.
      { command: bin('tsc'), args: ['-b', 'sdk/tsconfig.build.json', 'cli/tsconfig.build.json'] },
      vitest(['--config', 'vitest.e2e.config.mts']),
    ],
  },
]

/** Runs a step with its output on this terminal, or into `buffer` (a stage running alongside another). */
function runStep(step: Step, buffer?: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, {
      cwd: step.cwd ?? root,
      stdio: buffer ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    })
    for (const stream of [child.stdout, child.stderr])
      stream?.on('data', (chunk: Buffer) => buffer?.push(chunk.toString()))
    child.on('error', (err) => {
      console.error(`could not start ${step.command}: ${err.message}`)
      resolve(1)
    })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

interface VitestReport {
  testResults: {
    name: string
    status: string
    message?: string
    assertionResults: { fullName: string; status: string; failureMessages: string[] }[]
  }[]
}

const MESSAGE_LINES = 8
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what it removes.
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '')
/** The error's message and its frames in this repository's own files (not node_modules). */
const firstLines = (text: string) =>
  plain(text)
    .split('\n')
    .filter(
      (line) => line.trim() && !(line.trim().startsWith('at ') && /node_modules|\(<anonymous>\)|node:/.test(line)),
    )
    .slice(0, MESSAGE_LINES)
    .map((line) => `      ${line.replaceAll(`${root}/`, '')}`)

/**
 * Each failed test of a stage with the first lines of its error, printed again at the end: a CI
 * log is often read from its tail, and vitest's own account of a failure sits far above it.
 */
function failureSummary(stage: Stage): string[] {
  const lines: string[] = []
  for (const step of stage.steps) {
    if (!step.report || !existsSync(step.report)) continue
    const report = JSON.parse(readFileSync(step.report, 'utf8')) as VitestReport
    for (const file of report.testResults) {
      const where = file.name.replace(`${root}/`, '')
      const failed = file.assertionResults.filter((a) => a.status === 'failed')
      for (const test of failed)
        lines.push(`    ${where} › ${test.fullName}`, ...firstLines(test.failureMessages[0] ?? ''))
      if (!failed.length && file.status === 'failed')
        lines.push(`    ${where}`, ...firstLines(file.message || 'failed outside any test'))
    }
  }
  return lines
}

async function run(stage: Stage, buffer?: string[]): Promise<number> {
  let worst = 0
  for (const step of stage.steps) worst = Math.max(worst, await runStep(step, buffer))
  return worst
}

/**
 * Lanes of stages run side by side, each lane's stages one after the other, after the checks
 * (CHECKS), which keep both cores busy by themselves. Measured with every process's CPU time read
 * from /proc (docs/decisions.md "`npm test`: stages and lanes"): the inference stage keeps both cores busy, so it
 * goes last, beside the end of the end-to-end stage, whose fault tests mostly wait (on deadlines
 * and retry backoffs of a frozen server, on a restart); the Worker stage (one file at a time, about
 * one core) goes first, beside the bulk of the end-to-end stage (a stack, the model and a browser
 * behind HTTP); the contract tests (no stack, ~30 s) end the first lane, which is the shorter since
 * the end-to-end stage grew past the Worker and inference stages together (issue 46: 245 + 180 s
 * against 500 s). Anything more beside the end-to-end stage slowed it by more
 * than it gained: a third lane (session 15: 642 s against 603 s), the CPU-bound stages niced beside
 * everything, and lint and typecheck at the end of the first lane were each tried. Each stage has
 * its own servers on free ports; the page is built once before (WEB_PREBUILT_ENV) so none deletes
 * it under another. The first lane prints as it goes; the others' stages are printed whole as each
 * ends.
 */
const LANES: string[][] = [['worker', 'inference', 'contract'], ['e2e']]

/**
 * The checks before the lanes (the model's preparation, which the inference tests and the e2e
 * stack load; typecheck; lint; the deploy check) share two slots, a step per slot, queued in this
 * order and each stage's steps longest first, so that neither slot idles long at the end: on a
 * fresh clone the model's preparation took ~14 s on one core (ci29; ~5 s since session 17's
 * recorded probe, verified-graphs.ts), which one stage after another left the other core without
 * work for. In a working tree, whose model is prepared, both ways took 55–62 s here (session 16),
 * when the type checks were `tsc` 5.9's (the two largest ~15 s each; 1–2 s with tsgo). Each
 * step's output is printed whole when it ends; a stage's time is from its first step's start to
 * its last step's end.
 */
const CHECKS = ['model', 'typecheck', 'lint', 'deploy']
const CHECK_SLOTS = 2

async function runChecks(stages: Stage[]): Promise<void> {
  const progress = new Map(stages.map((stage) => [stage, { left: stage.steps.length, worst: 0, started: 0 }]))
  const queue = stages.flatMap((stage) => stage.steps.map((step) => ({ stage, step })))
  const slot = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const { stage, step } = next
      const state = progress.get(stage)!
      state.started ||= performance.now()
      const own: string[] = []
      // Awaited first, then compared: \`Math.max(state.worst, await …)\` reads \`worst\` before the
      // wait, so a step of the same stage that failed meanwhile in the other slot was overwritten.
      const code = await runStep(step, own)
      state.worst = Math.max(state.worst, code)
      const name = `${step.command.split('/').at(-1)} ${step.args.join(' ')}`
      process.stdout.write(`\n▶ ${stage.name}: ${name}\n${own.join('')}`)
      if (--state.left === 0) {
        results.push({ name: stage.name, code: state.worst, seconds: (performance.now() - state.started) / 1000 })
      }
    }
  }
  await Promise.all(Array.from({ length: CHECK_SLOTS }, slot))
}

const suiteStarted = performance.now()
const only = process.argv.slice(2)
const selected = STAGES.filter((stage) => !only.length || only.includes(stage.name))
const results: { name: string; code: number; seconds: number }[] = []
const timed = async (stage: Stage, buffer?: string[]) => {
  const started = performance.now()
  const code = await run(stage, buffer)
  results.push({ name: stage.name, code, seconds: (performance.now() - started) / 1000 })
}

/** Runs a lane's stages in order; a buffered lane prints each stage whole when it ends. */
async function runLane(lane: Stage[], buffered: boolean): Promise<void> {
  for (const stage of lane) {
    if (!buffered) {
      console.log(`\n▶ ${stage.name}`)
      await timed(stage)
      continue
    }
    const buffer: string[] = []
    await timed(stage, buffer)
    console.log(`\n▶ ${stage.name} (ran in a lane beside the others)\n${buffer.join('')}`)
  }
}

await buildWeb()
process.env[WEB_PREBUILT_ENV] = '1'
// The inference stage prepares the model itself only when run without the model stage.
if (selected.some((s) => s.name === 'model')) {
  for (const stage of selected)
    if (stage.name === 'inference') stage.steps = stage.steps.filter((s) => s !== prepareModel)
}
await runChecks(CHECKS.flatMap((name) => selected.filter((s) => s.name === name)))
const inLane = (stage: Stage) => LANES.some((lane) => lane.includes(stage.name))
for (const stage of selected.filter((s) => !inLane(s) && !CHECKS.includes(s.name))) {
  console.log(`\n▶ ${stage.name}`)
  await timed(stage)
}
const lanes = LANES.map((names) => names.flatMap((name) => selected.filter((s) => s.name === name))).filter(
  (lane) => lane.length,
)
if (lanes.length) {
  console.log(`\n▶ side by side: ${lanes.map((lane) => lane.map((s) => s.name).join(' → ')).join(' | ')}`)
  await Promise.all(lanes.map((lane, i) => runLane(lane, i > 0)))
}

const failures = STAGES.filter((s) => results.some((r) => r.name === s.name && r.code !== 0)).flatMap((stage) => {
  const lines = failureSummary(stage)
  return lines.length ? [`  ${stage.name}:`, ...lines] : []
})
if (failures.length) console.log(['\nFailed tests:', ...failures].join('\n'))
rmSync(reports, { recursive: true, force: true })

console.log('\nStages:')
results.sort((a, b) => STAGES.findIndex((s) => s.name === a.name) - STAGES.findIndex((s) => s.name === b.name))
for (const r of results)
  console.log(`  ${r.code === 0 ? 'pass' : 'FAIL'}  ${r.name.padEnd(10)} ${r.seconds.toFixed(0)} s`)
const failed = results.filter((r) => r.code !== 0).length
console.log(
  `stages: ${results.length - failed} passed, ${failed} failed, ${((performance.now() - suiteStarted) / 1000).toFixed(0)} s in all`,
)
process.exit(failed ? 1 : 0)
