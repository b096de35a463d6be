/**
 * @module
 * `cutout catalog FRONT [BACK SIDE DETAIL]`: a marketplace product photo from one to four
 * reference shots, in that order, with the fields POST /v1/catalog-images takes (`--width`,
 * `--height`, `--background`, `--shadow`, `--layout`, `--seed`, `--prompt`, `--steps`). Every
 * reference is checked locally first (so a typo costs no credit), the image is made while the
 * command waits and written as `<front>-catalog.png` in `--out` or beside the front shot. Its id
 * and seed are printed (and in --json): the seed, given back with the same shots and fields, makes
 * the same image again.
 */
import { dirname, join } from 'node:path'
import { type CatalogImageOptions, CutoutProblem } from '@cutout/sdk'
import { readImageFile } from '@cutout/sdk/node'
import { authedClient, type GlobalOptions, Output } from '../context.js'
import { CliError, EXIT, type ExitCode, uploadFailure } from '../exit.js'
import { checkInput, outputName, pathKey } from '../files.js'
import { writeAtomically } from './remove.js'

export interface CatalogCommandOptions extends GlobalOptions, CatalogImageOptions {
  out?: string
}

type Shadow = NonNullable<CatalogImageOptions['shadow']>
type Layout = NonNullable<CatalogImageOptions['layout']>
type Holds<T extends true> = T

/**
 * The choices `--shadow` and `--layout` offer in --help: runtime copies of the contract's lists,
 * held to the SDK's types both ways (`satisfies` refuses one the API lacks, `_All…` one it added).
 */
export const SHADOWS = ['none', 'soft', 'hard', 'floating'] as const satisfies readonly Shadow[]
export const LAYOUTS = ['hero', 'views'] as const satisfies readonly Layout[]
type _AllShadows = Holds<Exclude<Shadow, (typeof SHADOWS)[number]> extends never ? true : false>
type _AllLayouts = Holds<Exclude<Layout, (typeof LAYOUTS)[number]> extends never ? true : false>

/** `front.jpg` → `front-catalog.png`, beside it or in `--out`. */
const outputPath = (front: string, options: CatalogCommandOptions) =>
  join(options.out ?? dirname(front), outputName(front, 'cutout').replace(/-cutout\.png$/, '-catalog.png'))

/** Refuses (exit 2, before anything is sent) an output that would overwrite one of the shots. */
function checkOutput(references: string[], out: string): void {
  const overwritten = references.find((file) => pathKey(file) === pathKey(out))
  if (overwritten) {
    throw new CliError(
      EXIT.input,
      `the output ${out} would overwrite the input ${overwritten}. Nothing was sent: rename it, or use --out`,
    )
  }
}

/** The fields given on the command line, and none of the CLI's own options. */
function catalogFields(options: CatalogCommandOptions): CatalogImageOptions {
  const { prompt, width, height, steps, seed, background, shadow, layout } = options
  const fields: CatalogImageOptions = { prompt, width, height, steps, seed, background, shadow, layout }
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
}

/**
 * A refusal that names a reference (`references.1`: its bytes undecodable, too small, no subject
 * found) is that file's fault, exit 2, as an upload's refusal is.
 */
function referenceFailure(files: string[], err: unknown): unknown {
  const index = err instanceof CutoutProblem ? /^references\.(\d+)$/.exec(err.field ?? '')?.[1] : undefined
  const file = index === undefined ? undefined : files[Number(index)]
  return file ? uploadFailure(file, err) : err
}

export async function catalog(references: string[], options: CatalogCommandOptions): Promise<ExitCode> {
  const out = new Output(!!options.json)
  for (const file of references) await checkInput(file)
  const path = outputPath(references[0], options)
  checkOutput(references, path)
  // Read, and refused as the API would refuse them, before anything is sent.
  const shots = await Promise.all(
    references.map((file, i) =>
      readImageFile(file, { field: `references.${i}` }).catch((err) => {
        throw uploadFailure(file, err)
      }),
    ),
  )
  const cutout = await authedClient(options, (line) => out.info(line))
  const made = await cutout.createCatalogImage(shots, catalogFields(options)).catch((err) => {
    throw referenceFailure(references, err)
  })
  await writeAtomically(path, made.bytes)
  out.result({ out: path, id: made.id, seed: made.seed, url: made.url }, () =>
    [`${references.join(' + ')} → ${path}`, `catalog image ${made.id}, seed ${made.seed}`].join('\n'),
  )
  return EXIT.ok
}
