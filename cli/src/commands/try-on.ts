/**
 * @module
 * `cutout try-on PERSON GARMENT --category upper_body|lower_body|dress` (experimental): both photos
 * checked locally first (so a typo costs no credit), uploaded, the try-on made, waited for and
 * written as `<person>-try-on.png` in `--out` or beside the person photo. The job's notices
 * (experimental, a partly placed garment, no pose found) are printed, and carried in --json.
 */
import { dirname, join } from 'node:path'
import { jobProblem, type TryOnOptions } from '@cutout/sdk'
import { authedClient, type GlobalOptions, Output } from '../context.js'
import { EXIT, type ExitCode } from '../exit.js'
import { checkInput, outputName } from '../files.js'
import { uploadFile, writeAtomically } from './remove.js'

export interface TryOnCommandOptions extends GlobalOptions {
  out?: string
  category: TryOnOptions['category']
  seed?: number
}

/** `standing.jpg` → `standing-try-on.png`, beside it or in `--out`. */
const outputPath = (person: string, options: TryOnCommandOptions) =>
  join(options.out ?? dirname(person), outputName(person, 'cutout').replace(/-cutout\.png$/, '-try-on.png'))

export async function tryOn(person: string, garment: string, options: TryOnCommandOptions): Promise<ExitCode> {
  const out = new Output(!!options.json)
  await checkInput(person)
  await checkInput(garment)
  const cutout = await authedClient(options, (line) => out.info(line))
  const [p, g] = await Promise.all([uploadFile(cutout, person), uploadFile(cutout, garment)])
  const tryOnOptions: TryOnOptions = {
    category: options.category,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  }
  const created = await cutout.createTryOn({ uploadId: p.id }, { uploadId: g.id }, tryOnOptions, { wait: 8 })
  const job = await cutout.waitForJob(created.id)
  if (job.status !== 'succeeded') throw jobProblem(job)
  const path = outputPath(person, options)
  await writeAtomically(path, (await cutout.downloadResult(job)).bytes)
  const warnings = job.warnings ?? []
  out.result({ out: path, jobId: job.id, warnings }, () =>
    [`${person} + ${garment} → ${path}`, ...warnings.map((w) => `note: ${w.message}`)].join('\n'),
  )
  return EXIT.ok
}
