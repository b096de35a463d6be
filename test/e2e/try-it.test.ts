/**
 * `npm start`'s "Try it" works as printed (issue 30 item 3): the commands it prints are run, as
 * printed, by a POSIX shell in the repository root, where `npm start` runs. Each line must exit
 * 0, and the file the last one saves must be the photo's cutout, a real PNG with transparency,
 * not an error page saved under a .png name.
 */
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, expect, it } from 'vitest'
import { startBanner } from '../../scripts/lib/start-banner'
import { e2eStack } from '../helpers/e2e-stack'
import type { SharedStack } from '../helpers/shared-stack'

const sharp = createRequire(new URL('../../inference-server/package.json', import.meta.url))(
  'sharp',
) as typeof import('sharp').default

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '')
const CUTOUT = join(ROOT, 'out', 'cutout.png')
/** Marks each command's exit status in the shell's output. */
const EXIT_MARK = '__exit__'

let stack: SharedStack

beforeAll(() => {
  stack = e2eStack()
})

/** The indented lines under "Try it" in what `npm start` printed. */
function printedCommands(output: string): string[] {
  const lines = output.split('\n')
  const start = lines.findIndex((line) => line.startsWith('Try it'))
  expect(start, output).toBeGreaterThan(-1)
  const commands: string[] = []
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ')) break
    commands.push(line.slice(2))
  }
  return commands
}

/** Runs `commands` in one `sh` (as pasted into a terminal) and returns each one's exit status. */
function runInShell(commands: string[], cwd: string): Promise<{ statuses: number[]; output: string }> {
  const script = commands.map((command) => `${command}\necho "${EXIT_MARK}$?"`).join('\n')
  return new Promise((resolve, reject) => {
    const shell = spawn('sh', ['-c', script], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    shell.stdout.on('data', (d) => (output += d))
    shell.stderr.on('data', (d) => (output += d))
    shell.once('error', reject)
    shell.once('exit', () => {
      const statuses = [...output.matchAll(new RegExp(`${EXIT_MARK}(\\d+)`, 'g'))].map((m) => Number(m[1]))
      resolve({ statuses, output })
    })
  })
}

it('prints the banner startBanner() makes', () => {
  const printed = startBanner({ baseUrl: stack.baseUrl, apiKey: stack.apiKey, root: ROOT })
  expect(stack.banner).toContain(printed)
})

it('runs as printed from the repository root: every command exits 0 and saves the cutout as a PNG', {
  timeout: 300_000,
}, async () => {
  rmSync(CUTOUT, { force: true })
  const commands = printedCommands(stack.banner)
  expect(commands.length, stack.banner).toBeGreaterThan(1)

  const { statuses, output } = await runInShell(commands, ROOT)
  expect(statuses, output).toEqual(commands.map(() => 0))

  const bytes = readFileSync(CUTOUT)
  const meta = await sharp(bytes).metadata()
  expect(meta.format, output).toBe('png')
  expect(meta.hasAlpha).toBe(true)
  // examples/photo.jpg is 512×512; the cutout keeps the photo's size.
  expect([meta.width, meta.height]).toEqual([512, 512])
})
