/**
 * @module
 * `cutout remove FILE…`: each file in one SDK call (upload → removal → wait → download), a few at
 * a time, written as `<name>-cutout.png` (or `-mask.png`) in `--out` or beside the input. Every
 * input is checked before anything is uploaded, so a typo costs no credit, and so are the output
 * names: two inputs that would write the same output (`shoe.jpg`, `shoe.png`) are refused. A file
 * the API would refuse by its size or header fails on its own, as the API's refusal would, but
 * before any of it is uploaded.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { type Cutout, jobProblem, type RemovalOptions, type Upload } from '@cutout/sdk'
import { readImageFile } from '@cutout/sdk/node'
import { authedClient, type GlobalOptions, Output } from '../context.js'
import { describe, EXIT, exitCodeFor, type ExitCode, uploadFailure } from '../exit.js'
import { checkInput, checkOutputs, outputName, pool, uniqueFiles } from '../files.js'
import { createProgress } from '../progress.js'

export interface RemoveOptions extends GlobalOptions {
  out?: string
  quality: RemovalOptions['quality']
  output: RemovalOptions['output']
  concurrency: number
}

export interface FileOutcome {
  file: string
  /** `not-started`: `batch` stopped (e.g. out of credits) before this file's turn. */
  status: 'done' | 'skipped' | 'failed' | 'not-started'
  out?: string
  jobId?: string
  error?: string
  exitCode?: ExitCode
}

/** Writes through a temporary name, so an interrupted run never leaves a file that looks done. */
export async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const temporary = `${path}.partial`
  await writeFile(temporary, bytes)
  await rename(temporary, path)
}

const outputPath = (file: string, options: RemoveOptions) =>
  join(options.out ?? dirname(file), outputName(file, options.output))

/**
 * Uploads a file; its refusal ends as exit 2, whether the SDK refused it before sending anything
 * (too large, not an image, out of bounds by its header: the API's words) or the API did (undecodable).
 */
export async function uploadFile(cutout: Cutout, file: string): Promise<Upload> {
  try {
    return await cutout.upload(await readImageFile(file))
  } catch (err) {
    throw uploadFailure(file, err)
  }
}

/** `removeBackground` in its steps, so that a refusal of the upload is told apart from the rest. */
async function removeOne(cutout: Cutout, file: string, options: RemoveOptions): Promise<FileOutcome> {
  const out = outputPath(file, options)
  const upload = await uploadFile(cutout, file)
  const removal = { quality: options.quality, output: options.output }
  const created = await cutout.createRemoval({ uploadId: upload.id }, removal, { wait: 8 })
  const job = await cutout.waitForJob(created.id)
  if (job.status !== 'succeeded') throw jobProblem(job)
  await writeAtomically(out, (await cutout.downloadResult(job)).bytes)
  return { file, status: 'done', out, jobId: job.id }
}

/** The worst exit code among failures (the most specific one a script can act on). */
export function worstExit(outcomes: FileOutcome[]): ExitCode {
  return outcomes.reduce<ExitCode>((worst, o) => (o.exitCode && o.exitCode > worst ? o.exitCode : worst), EXIT.ok)
}

export async function remove(named: string[], options: RemoveOptions): Promise<ExitCode> {
  const out = new Output(!!options.json)
  const files = uniqueFiles(named)
  for (const file of files) await checkInput(file)
  checkOutputs(files.map((file) => ({ file, out: outputPath(file, options) })))
  const cutout = await authedClient(options, (line) => out.info(line))
  const progress = createProgress(files.length)
  const settled = await pool(files, options.concurrency, async (file) => {
    const outcome = await removeOne(cutout, file, options).catch(
      (err): FileOutcome => ({ file, status: 'failed', error: describe(err), exitCode: exitCodeFor(err) }),
    )
    progress.tick(outcome.status === 'done' ? `${file} → ${outcome.out}` : `${file}: failed: ${outcome.error}`)
    return outcome
  })
  progress.stop()
  const outcomes = settled.map((s) => (s.status === 'fulfilled' ? s.value : ({} as FileOutcome)))
  const failed = outcomes.filter((o) => o.status === 'failed')
  out.result({ files: outcomes }, `${outcomes.length - failed.length} done, ${failed.length} failed`)
  return worstExit(outcomes)
}
