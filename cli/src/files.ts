/**
 * @module
 * Local files: checking inputs before any upload (a typo fails fast, exit 2), the output name of
 * each input (`photo.jpg` → `photo-cutout.png` or `photo-mask.png`, never the input itself),
 * listing a folder's images, and a small worker pool for `--concurrency`.
 */
import { access, constants, readdir, stat } from 'node:fs/promises'
import { basename, extname, join } from 'node:path'
import { CliError, EXIT } from './exit.js'

export const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.webp', '.avif', '.heic', '.heif'])
const OUTPUT_SUFFIX = /-(cutout|mask)\.png$/i

/** Throws exit 2 with a clear message when `path` is not a readable file. */
export async function checkInput(path: string): Promise<void> {
  let info: Awaited<ReturnType<typeof stat>>
  try {
    info = await stat(path)
    await access(path, constants.R_OK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code)
    throw new CliError(EXIT.input, `cannot read ${path}: ${why}`)
  }
  if (!info.isFile()) throw new CliError(EXIT.input, `cannot read ${path}: not a file`)
}

export function outputName(input: string, output: 'cutout' | 'mask'): string {
  const name = basename(input)
  return `${name.slice(0, name.length - extname(name).length)}-${output}.png`
}

/** The images directly in `dir` (not our own outputs), sorted for a stable order. */
export async function listImages(dir: string): Promise<string[]> {
  let entries: string[]
  try {
    entries = await readdir(dir)
  } catch {
    throw new CliError(EXIT.input, `cannot read folder ${dir}`)
  }
  const images = entries.filter((e) => IMAGE_EXTENSIONS.has(extname(e).toLowerCase()) && !OUTPUT_SUFFIX.test(e))
  return images.sort().map((e) => join(dir, e))
}

export async function exists(path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}

/** Runs `work` over `items`, at most `limit` at a time; every item is tried, results in order. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length)
  let next = 0
  async function worker() {
    while (next < items.length) {
      const index = next++
      try {
        results[index] = { status: 'fulfilled', value: await work(items[index]) }
      } catch (reason) {
        results[index] = { status: 'rejected', reason }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return results
}

/** Parses a positive integer option (commander passes strings). */
export function positiveInt(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new CliError(EXIT.usage, `expected a positive integer, got ${value}`)
  return n
}
