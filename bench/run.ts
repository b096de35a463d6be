/**
 * `npm run bench -- <suite> [flags]`: the one door to every benchmark. With no suite (or `--list`)
 * it lists them; with one it runs that suite's script in this process, its own flags passed on
 * as they are (`npm run bench -- quality-gt --only davis --name mine`). Each script parses its own
 * flags and says them in its header comment; docs/benchmarks.md says what each measures.
 *
 * Every script in bench/ is a suite here: `--list` fails when one is missing, so a new script
 * cannot sit beside the door unlisted. Shared code lives in bench/lib/, never in a suite.
 */
import { readdirSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Command } from 'commander'

interface Suite {
  /** The script under bench/. */
  file: string
  /** What it measures, and what it writes. */
  about: string
}

/** The suites, in the order docs/benchmarks.md describes them. */
export const SUITES: Record<string, Suite> = {
  all: {
    file: 'all.ts',
    about:
      'the run of record: model floor, server, API and @imgly reference times, then levels, throughput, quality-gt, quality-synthetic, refinement, tryon, catalog and clicks (--no-<part> skips one) → results/<name>.json',
  },
  'quality-gt': {
    file: 'quality-gt.ts',
    about: 'every level on the real photos of ../shared/gt, cross-validated → results/quality-gt-<name>.json',
  },
  'quality-synthetic': {
    file: 'quality-synthetic.ts',
    about: 'every level on synthetic 4/12 MP composites (agreement with the model) → quality-synthetic-<name>.json',
  },
  levels: {
    file: 'levels.ts',
    about: "fast's input-size sweep; --whole: fast vs balanced through the API; --fast-colours → levels-<name>.json",
  },
  throughput: {
    file: 'throughput.ts',
    about: 'images per minute, one 2-thread session vs two 1-thread ones → throughput-<name>.json',
  },
  refinement: {
    file: 'refinement.ts',
    about: 'box and point refinements on placed composites → refinement-<name>.json',
  },
  clicks: {
    file: 'clicks.ts',
    about: 'simulated clicks on ../shared/gt (NoC@85/90, IoU per click) → clicks-<name>.json',
  },
  'confidence-gt': {
    file: 'confidence-gt.ts',
    about: "the low_confidence warning's measure and threshold, cross-validated → confidence-gt-<name>.json",
  },
  'person-gt': {
    file: 'person-gt.ts',
    about: "the person segmenter as a second opinion on high's mask → person-gt-<name>.json",
  },
  tryon: { file: 'tryon.ts', about: 'a 1 MP try-on against one segmentation run → tryon-<name>.json' },
  catalog: {
    file: 'catalog.ts',
    about: 'a catalog image against the model floor; super-resolution → catalog-<name>.json',
  },
  soak: { file: 'soak.ts', about: "1,000 sequential removals, the server's memory → soak-<name>.json" },
  load: { file: 'load.ts', about: 'load on the whole stack with autocannon, stage by stage → load-<name>.json' },
  faults: { file: 'faults.ts', about: 'kill, freeze and restart parts of the stack mid-batch → faults-<name>.json' },
  fleet: { file: 'fleet.ts', about: 'the Worker in front of three inference servers, one killed → fleet-<name>.json' },
  memory: {
    file: 'worker-memory.ts',
    about: "the Worker isolate's memory for the largest bodies → worker-memory-<name>.json",
  },
  malloc: { file: 'malloc.ts', about: "glibc's fixed mmap threshold against without it → malloc-<name>.json" },
  crops: { file: 'crops.ts', about: "pictures: the levels' edge crops of a composite → docs/quality/*.png" },
  'level-pictures': {
    file: 'level-pictures.ts',
    about: "pictures: fast's input sizes on rocket.jpg, IoU by input size → docs/quality/*.png",
  },
  'hard-sheet': {
    file: 'hard-sheet.ts',
    about:
      "pictures: ../shared/gt's hardest pairs, high with and without its faint pass → results/sheets/ (not committed)",
  },
  'edge-crops': {
    file: 'edge-crops.ts',
    about: "pictures: the faint pass's raised border, close → results/sheets/ (not committed)",
  },
}

const BENCH = fileURLToPath(new URL('./', import.meta.url))

/** Scripts in bench/ that are no suite here (the door itself aside). */
function unlisted(): string[] {
  const listed = new Set(Object.values(SUITES).map((s) => s.file))
  return readdirSync(BENCH).filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !listed.has(f))
}

function list(): void {
  const width = Math.max(...Object.keys(SUITES).map((n) => n.length))
  process.stdout.write("npm run bench -- <suite> [the suite's flags]\n\n")
  for (const [name, suite] of Object.entries(SUITES)) process.stdout.write(`  ${name.padEnd(width)}  ${suite.about}\n`)
  const missing = unlisted()
  if (missing.length) {
    process.stderr.write(`\nbench/ scripts missing from the door (bench/run.ts SUITES): ${missing.join(', ')}\n`)
    process.exitCode = 1
  }
}

/** Runs `suite` in this process as if started alone: its script is argv[1], `args` after it. */
async function run(name: string, args: string[]): Promise<void> {
  const suite = SUITES[name]
  if (!suite) {
    process.stderr.write(`No suite "${name}". The suites:\n`)
    list()
    process.exit(2)
  }
  const script = `${BENCH}${suite.file}`
  // The scripts start when they are the process's main module and read their flags from argv.
  process.argv = [process.argv[0], script, ...args]
  await import(pathToFileURL(script).href)
}

const program = new Command('npm run bench --')
  .description('Runs one benchmark suite; lists them with no suite or --list.')
  .argument('[suite]', 'the suite to run (see --list)')
  .argument('[flags...]', "the suite's own flags, passed on as they are")
  .option('--list', 'list the suites')
  .passThroughOptions()
  .showHelpAfterError('(name a suite first: npm run bench -- <suite> [flags])')
  .action(async (suite: string | undefined, flags: string[], options: { list?: boolean }) => {
    if (options.list || !suite) list()
    else await run(suite, flags)
  })

await program.parseAsync(process.argv)
