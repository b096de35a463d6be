/**
 * README's quick start is `npm install` then commands: the CLI must run right after the install,
 * from the repository root, and only as this repository's own code. Without a local `cutout`
 * command, `npx cutout` asks the public registry for a package of that name (someone else's, or a
 * typosquat). No stack is needed: these run the commands README names.
 */
import { execFileSync, spawn } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { Run } from './run-cli'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = join(ROOT, 'cli', 'bin', 'cutout.js')
const work = mkdtempSync(join(tmpdir(), 'cutout-cli-install-'))

afterAll(() => rmSync(work, { recursive: true, force: true }))

/**
 * Runs `command` in the repository root with no registry to reach: a dead address, and offline,
 * so a lookup fails at once (ENOTCACHED) instead of being retried.
 */
function run(command: string, args: string[], cwd = ROOT): Promise<Run> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_offline: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const result: Run = { code: -1, stdout: '', stderr: '' }
  child.stdout.on('data', (d) => (result.stdout += d))
  child.stderr.on('data', (d) => (result.stderr += d))
  return new Promise((resolve) => child.once('close', (code) => resolve({ ...result, code: code ?? -1 })))
}

const readJson = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'))

describe('the CLI after npm install', () => {
  it('is linked as node_modules/.bin/cutout, to the bin file in the sources', () => {
    expect(readJson('cli/package.json').bin).toEqual({ cutout: './bin/cutout.js' })
    expect(realpathSync(join(ROOT, 'node_modules', '.bin', 'cutout'))).toBe(realpathSync(BIN))
    // npm skips linking a bin whose file is missing; a file git keeps is there in a clean clone
    // before anything is built (dist/ is ignored).
    expect(execFileSync('git', ['ls-files', 'cli/bin/cutout.js'], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe(
      'cli/bin/cutout.js',
    )
  })

  it('is built by the install: the root prepare script builds the SDK, then the CLI on it', () => {
    const { scripts } = readJson('package.json')
    expect(scripts.prepare).toBe('npm run build:sdk')
    expect(scripts['build:sdk']).toBe('npm run build -w sdk -w cli')
  })

  it.each([
    ['npx', '--no-install cutout --help'],
    ['npm', 'run -s cutout -- --help'],
  ])('`%s %s` runs ours from the root, with no registry', async (command, args) => {
    const result = await run(command, args.split(' '))
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^Usage: cutout \[options\] \[command\]/)
    expect(result.stdout).toContain('remove the background of each file')
  })

  it('before a build, says how to build instead of a bare MODULE_NOT_FOUND', async () => {
    // The bin file alone, in a package like cli/ (ESM) with no dist/ beside it.
    mkdirSync(join(work, 'bin'))
    copyFileSync(BIN, join(work, 'bin', 'cutout.js'))
    writeFileSync(join(work, 'package.json'), JSON.stringify({ type: 'module' }))
    const result = await run(process.execPath, [join(work, 'bin', 'cutout.js'), '--help'], work)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('The CLI is not built: run `npm run build:sdk` (npm install runs it).')
  })
})

describe("README's walkthroughs", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')

  it('use sample images that are in the repository', () => {
    const inputs = [
      ...readme.matchAll(/=@([\w./-]+\.(?:jpe?g|png|webp))/g), // curl --data-binary @… and -F part=@…
      ...readme.matchAll(/readFile\('([^']+)'\)/g), // the SDK
      ...readme.matchAll(/cutout (?:remove|batch) (\S+)/g), // the CLI
    ].map((m) => m[1])
    expect(inputs).toContain('examples/photo.jpg')
    expect(inputs.filter((path) => !existsSync(join(ROOT, path)))).toEqual([])
  })

  it('name the CLI only in forms that cannot run a package from the registry', () => {
    const calls = [...readme.matchAll(/(npx(?: --\S+)* cutout|npm run -s cutout --)(?= )/g)].map((m) => m[1])
    expect(calls.length).toBeGreaterThanOrEqual(3)
    expect(new Set(calls)).toEqual(new Set(['npx --no-install cutout', 'npm run -s cutout --']))
  })
})
