/**
 * The catalog capability's interface (DESIGN.md §3 Catalog images): a `CatalogGenerator` turns
 * one to four references and the options into a PNG of exactly width×height. Two backends,
 * chosen by configuration (`CATALOG_BACKEND`, read by main.ts through `catalogConfigFromEnv`):
 * `cpu` (cpu.ts, the default: deterministic composition, no generative model) and `remote`
 * (remote.ts: a GPU diffusion server over the HTTP protocol of docs/catalog.md).
 */
import type { CatalogOptions } from '../../../src/contract/catalog.js'
import type { Notice } from '../../../src/contract/frames.js'
import type { InferenceStage } from '../../../src/contract/stages.js'
import type { Segmenter } from '../segmentation/index.js'
import type { Layer, Rgb } from './compose.js'
import type { CatalogReference } from './references.js'
import type { Light } from './shadow.js'
import type { Subject } from './subject.js'
import { remoteSettingsFromEnv } from '../remote-config.js'

export type { CatalogReference }

export interface GenerateContext {
  /** The segmentation model (the CPU generator cuts every reference out with it). */
  segmenter: Segmenter
  /** Told each stage as the work enters it. */
  onStage(stage: InferenceStage): void
  /** Return the intermediate planes too (tests, docs pictures). */
  inspect?: boolean
}

/** What the CPU generator composed, when asked (`inspect`). */
export interface Inspection {
  subjects: Array<Pick<Subject, 'box' | 'balance' | 'width' | 'height'>>
  /** The subjects as placed: their rectangles, colours and alpha. */
  layers: Layer[]
  /** The shadow's darkness plane (canvas-sized), null for `none`. */
  shade: Uint8Array | null
  background: Rgb
  light: Light
}

export interface CatalogResult {
  png: Uint8Array
  width: number
  height: number
  warnings: Notice[]
  /** Milliseconds per step; `superResolution` is there only when the model ran. */
  timings: Record<string, number>
  inspection?: Inspection
}

export interface CatalogGenerator {
  readonly backend: 'cpu' | 'remote'
  /** Sent as `X-Model-Version` and in `done`. */
  version(segmenter: Segmenter): string
  /**
   * @throws {InferenceError} 400/413/415 for bad references (naming the part), 500/503 for failures
   */
  generate(references: CatalogReference[], options: CatalogOptions, context: GenerateContext): Promise<CatalogResult>
  close(): Promise<void>
}

export type CatalogConfig =
  | { backend: 'cpu'; superResolution: boolean }
  | { backend: 'remote'; url: string; token?: string; timeoutMs: number; model: string }

/**
 * Reads `CATALOG_BACKEND` (`cpu`, default, or `remote`), `CATALOG_SUPER_RESOLUTION` (`esrgan`,
 * default, or `off`), and for `remote` `CATALOG_REMOTE_URL` (required, http or https),
 * `CATALOG_REMOTE_TOKEN`, `CATALOG_REMOTE_TIMEOUT_MS` and `CATALOG_REMOTE_MODEL`.
 * @throws {Error} naming the variable when a value is not allowed
 */
export function catalogConfigFromEnv(env: Record<string, string | undefined>): CatalogConfig {
  const backend = env.CATALOG_BACKEND || 'cpu'
  if (backend === 'cpu') {
    const sr = env.CATALOG_SUPER_RESOLUTION || 'esrgan'
    if (sr !== 'esrgan' && sr !== 'off')
      throw new Error(`Expected esrgan or off for CATALOG_SUPER_RESOLUTION but received ${sr}`)
    return { backend, superResolution: sr === 'esrgan' }
  }
  if (backend !== 'remote') throw new Error(`Expected cpu or remote for CATALOG_BACKEND but received ${backend}`)
  return { backend, ...remoteSettingsFromEnv(env, 'CATALOG') }
}
