/**
 * The try-on capability's interface (DESIGN.md §3 Virtual try-on): a `TryOnModel` dresses the
 * person photo in the garment photo and answers a PNG at the person photo's size, the landmarks
 * it used and its warnings. Two backends, chosen by configuration (`TRYON_BACKEND`, read by
 * main.ts through `tryOnConfigFromEnv`): `cpu` (cpu.ts, the default: BlazePose, a cut-out and a
 * thin-plate-spline warp; geometric, not generative) and `remote` (remote.ts: a GPU try-on model
 * over the HTTP protocol of docs/try-on.md).
 */
import type { Notice } from '../../../src/contract/frames.js'
import type { InferenceStage } from '../../../src/contract/stages.js'
import type { TryOnLandmarks, TryOnRequest } from '../../../src/contract/tryon.js'
import { TRYON_WARNINGS } from '../../../src/contract/tryon.js'
import type { Segmenter } from '../segmentation/index.js'
import { remoteSettingsFromEnv } from '../remote-config.js'

/** The two images as received: their part names (`person`, `garment`) and bytes. */
export interface TryOnInput {
  person: Uint8Array
  garment: Uint8Array
}

export interface TryOnContext {
  /** The segmentation model (the CPU model cuts the garment out with it). */
  segmenter: Segmenter
  onStage(stage: InferenceStage): void
}

export interface TryOnResult {
  png: Uint8Array
  width: number
  height: number
  landmarks: TryOnLandmarks
  warnings: Notice[]
  /** Milliseconds per step. */
  timings: Record<string, number>
}

export interface TryOnModel {
  readonly backend: 'cpu' | 'remote'
  /** Sent as `X-Model-Version` and in `done`. */
  version(segmenter: Segmenter): string
  /** Resolves when the model can serve (the CPU model's pose models have loaded). */
  ready(): Promise<void>
  /**
   * @throws {InferenceError} `invalid_input` naming `person` when no body is found; 400/413/415 naming the part for bad images
   */
  tryOn(input: TryOnInput, options: TryOnRequest, context: TryOnContext): Promise<TryOnResult>
  close(): Promise<void>
}

/** On every result, whatever the backend: the CPU model is experimental, GPU try-on models are mostly non-commercial. */
export const EXPERIMENTAL_NOTICE: Notice = {
  code: TRYON_WARNINGS.experimental,
  message:
    'Virtual try-on is experimental and for internal, non-commercial evaluation only (docs/try-on.md): the result is a geometric approximation, not a photograph',
}

export type TryOnConfig =
  | { backend: 'cpu' }
  | { backend: 'remote'; url: string; token?: string; timeoutMs: number; model: string }

/**
 * Reads `TRYON_BACKEND` (`cpu`, default, or `remote`), and for `remote` `TRYON_REMOTE_URL`
 * (required, http or https), `TRYON_REMOTE_TOKEN`, `TRYON_REMOTE_TIMEOUT_MS` and `TRYON_REMOTE_MODEL`.
 * @throws {Error} naming the variable when a value is not allowed
 */
export function tryOnConfigFromEnv(env: Record<string, string | undefined>): TryOnConfig {
  const backend = env.TRYON_BACKEND || 'cpu'
  if (backend === 'cpu') return { backend }
  if (backend !== 'remote') throw new Error(`Expected cpu or remote for TRYON_BACKEND but received ${backend}`)
  return { backend, ...remoteSettingsFromEnv(env, 'TRYON') }
}
