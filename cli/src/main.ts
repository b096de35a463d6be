#!/usr/bin/env node
/**
 * @module
 * `cutout`: the command line on @cutout/sdk. Arguments are parsed by commander; each command lives
 * in src/commands. Errors end the process with the exit codes of src/exit.ts and one clear line
 * on stderr (`mcp` keeps stdout for the protocol). Environment: CUTOUT_API_KEY (used instead of a stored session), CUTOUT_BASE_URL.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { keysCreate, keysList, keysRevoke, jobs, usage } from './commands/account.js'
import { batch } from './commands/batch.js'
import { type CatalogCommandOptions, catalog, LAYOUTS, SHADOWS } from './commands/catalog.js'
import { login, logout } from './commands/login.js'
import { remove, type RemoveOptions } from './commands/remove.js'
import { type TryOnCommandOptions, tryOn } from './commands/try-on.js'
import { CliError, describe, EXIT, exitCodeFor } from './exit.js'
import { positiveInt } from './files.js'

const program = new Command('cutout')
  .description('Remove image backgrounds with the Cutout API')
  .option('--json', 'print results as JSON (for scripts)')
  .option('--base-url <url>', 'API origin (default: CUTOUT_BASE_URL, the signed-in API, or http://127.0.0.1:8787)')
  .showHelpAfterError()
  .exitOverride()

/** Every action's result code; thrown errors are mapped in `main`. */
let exitCode: number = EXIT.ok
const globals = () => program.opts<{ json?: boolean; baseUrl?: string }>()
const intOption = (value: string) => {
  try {
    return positiveInt(value)
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message)
  }
}

/** A whole number from 0 (a seed may be 0; `intOption` starts at 1). */
const wholeOption = (value: string) => {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected a whole number, got ${value}`)
  return Number(value)
}

function processing(command: Command, defaultConcurrency: number): Command {
  return command
    .option('--out <dir>', 'where to write results')
    .addOption(
      new Option('--quality <level>', 'model quality').choices(['fast', 'balanced', 'high']).default('balanced'),
    )
    .addOption(
      new Option('--output <kind>', 'transparent cutout or grayscale mask')
        .choices(['cutout', 'mask'])
        .default('cutout'),
    )
    .option('--concurrency <n>', 'files at a time', intOption, defaultConcurrency)
}

program
  .command('login')
  .description('sign in with a device code (approve it in a browser)')
  .action(() => login(globals()))
program
  .command('logout')
  .description('revoke and forget the stored session')
  .action(() => logout(globals()))

processing(
  program.command('remove').argument('<files...>').description('remove the background of each file'),
  2,
).action(async (files: string[], options: RemoveOptions) => {
  exitCode = await remove(files, { ...globals(), ...options })
})
processing(
  program.command('batch').argument('<dir>').description("process a folder's images, skipping done ones"),
  4,
).action(async (dir: string, options: RemoveOptions) => {
  exitCode = await batch(dir, { ...globals(), ...options })
})
program
  .command('try-on')
  .argument('<person>', 'a photo of a person, upright')
  .argument('<garment>', 'a photo of the garment (flat lay or product shot)')
  .description('put a garment on the person in a photo (experimental, non-commercial)')
  .addOption(
    new Option('--category <kind>', 'what the garment is')
      .choices(['upper_body', 'lower_body', 'dress'])
      .makeOptionMandatory(),
  )
  .option('--seed <n>', 'the same seed gives the same result (0 is a seed)', wholeOption)
  .option('--out <dir>', 'where to write the result')
  .action(async (person: string, garment: string, options: TryOnCommandOptions) => {
    exitCode = await tryOn(person, garment, { ...globals(), ...options })
  })
program
  .command('catalog')
  .argument('<references...>', 'one to four shots of the product: front, back, side, detail')
  .description('make a marketplace product photo from one to four shots (POST /v1/catalog-images)')
  .option('--width <px>', 'output width, 256–4096 (default 1024)', intOption)
  .option('--height <px>', 'output height, 256–4096 (default 1024)', intOption)
  .option('--background <#RRGGBB>', 'background colour (default #FFFFFF)')
  .addOption(new Option('--shadow <kind>', 'shadow under the product (default soft)').choices(SHADOWS))
  .addOption(
    new Option('--layout <kind>', 'hero: the front alone; views: every shot in a row (default hero)').choices(LAYOUTS),
  )
  .option('--seed <n>', 'the seed of an earlier image makes it again (default random)', wholeOption)
  .option('--prompt <text>', 'for generative backends (recorded)')
  .option('--steps <n>', 'for generative backends, 1–100', intOption)
  .option('--out <dir>', 'where to write <front>-catalog.png')
  .action(async (references: string[], options: CatalogCommandOptions) => {
    exitCode = await catalog(references, { ...globals(), ...options })
  })
program
  .command('jobs')
  .description('list recent jobs')
  .option('--limit <n>', 'how many', intOption, 20)
  .option('--status <status>', 'only jobs in this status')
  .action((options) => jobs({ ...globals(), ...options }))
program
  .command('usage')
  .description('show credits')
  .action(() => usage(globals()))

program
  .command('mcp')
  .description("serve the API's MCP tools on stdio, for AI assistants (see docs/mcp.md)")
  // Loaded only here: the MCP SDK would add half a second to every other command's start.
  .action(async () => (await import('./commands/mcp.js')).mcp(globals()))

const keys = program.command('keys').description('manage API keys')
keys
  .command('list')
  .description('list API keys')
  .action(() => keysList(globals()))
keys
  .command('create')
  .description('create an API key (the secret is shown once)')
  .option('--name <name>', 'a label')
  .option('--scopes <list>', 'comma-separated scopes (default: your own)')
  .action((options) => keysCreate({ ...globals(), ...options }))
keys
  .command('revoke')
  .argument('<id>')
  .description('revoke an API key')
  .action((id: string) => keysRevoke(id, globals()))

async function main(): Promise<number> {
  try {
    await program.parseAsync(process.argv)
    return exitCode
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage
    const code = exitCodeFor(err)
    process.stderr.write(`cutout: ${err instanceof CliError ? err.message : describe(err)}\n`)
    return code
  }
}

process.exitCode = await main()
