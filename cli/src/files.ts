/**
 * @module
 * Local files: checking inputs before any upload (a typo fails fast, exit 2), the output name of
 * each input (`photo.jpg` → `photo-cutout.png` or `photo-mask.png`, never the input itself, never
 * shared by two inputs), listing a folder's images, and a small worker pool for `--concurrency`.
 */
import { access, constants, readdir, stat } from 'node:fs/promises'
import { basename, extname, join, resolve } from 'node:path'
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

/**
 * How a path is compared for collisions: absolute, Unicode NFC and case-folded, because macOS and
 * Windows file systems treat `Shoe.png` and `shoe.png` (and NFC/NFD spellings) as one file.
 */
export const pathKey = (path: string) => resolve(path).normalize('NFC').toLowerCase()

/**
 * Refuses (exit 2, before anything is uploaded or charged) inputs whose outputs would be the same
 * file, so one result would overwrite another (`shoe.jpg` and `shoe.png`; `a/x.jpg` and `b/x.jpg`
 * into one --out), and an output that would overwrite one of the inputs. The same file named twice
 * is not a collision: the caller passes each input once.
 */
export function checkOutputs(items: { file: string; out: string }[]): void {
  const problems: string[] = []
  const inputs = new Map(items.map((i) => [pathKey(i.file), i.file]))
  const byOutput = new Map<string, { out: string; files: string[] }>()
  for (const item of items) {
    const key = pathKey(item.out)
    const overwritten = inputs.get(key)
    if (overwritten) problems.push(`the output of ${item.file} would overwrite the input ${overwritten}`)
    const group = byOutput.get(key)
    if (group) group.files.push(item.file)
    else byOutput.set(key, { out: item.out, files: [item.file] })
  }
  for (const { out, files } of byOutput.values()) {
    if (files.length > 1) {
      const names = `${files.slice(0, -1).join(', ')} and ${files.at(-1)}`
      problems.push(`${names} would ${files.length === 2 ? 'both' : 'all'} be written to ${out}`)
    }
  }
  if (problems.length) {
    throw new CliError(
      EXIT.input,
      `${problems.join('; ')}. Nothing was uploaded: rename the inputs, or run them with different --out folders`,
    )
  }
}

/** `files` with each file once (the same path named twice is processed once). */
export function uniqueFiles(files: string[]): string[] {
  return [...new Map(files.map((f) => [pathKey(f), f])).values()]
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
