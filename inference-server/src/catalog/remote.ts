/**
 * The remote generative backend (`CATALOG_BACKEND=remote`): a client of a GPU diffusion server
 * speaking the catalog backend protocol of docs/catalog.md. One multipart POST carries a
 * `request` JSON part (prompt, steps, seed, size, background, shadow, layout, the count of
 * references) and the references as PNGs (decoded and upright here, so the GPU server needs no
 * HEIC or EXIF handling; long side at most 2048 px). The answer is the PNG, exactly
 * width×height. Its failures map to the inference server's error codes (remote-backend.ts).
 */
import type { CatalogOptions } from '../../../src/contract/catalog.js'
import { InferenceError } from '../errors.js'
import type { RemoteSettings } from '../remote-config.js'
import {
  checkRemotePng,
  MAX_ANSWER_BYTES,
  postRemote,
  readCapped,
  readRefusal,
  refusalError,
  remotePng,
} from '../remote-backend.js'
import type { CatalogGenerator, CatalogReference, CatalogResult, GenerateContext } from './generator.js'
import { decodeReference } from './references.js'

// Where the catalog backend's status mapping was first written, and is still tested.
export { mapRemoteStatus } from '../remote-backend.js'

export const REMOTE_PROTOCOL_VERSION = 1

/** The JSON `request` part. */
export interface RemoteRequest {
  protocol: typeof REMOTE_PROTOCOL_VERSION
  prompt: string
  steps: number
  seed: number
  width: number
  height: number
  background: string
  shadow: CatalogOptions['shadow']
  layout: CatalogOptions['layout']
  references: number
}

/**
 * @example createRemoteGenerator({ url: 'http://gpu-1:8000/v1/catalog/generate', timeoutMs: 120_000, model: 'sdxl' })
 */
export function createRemoteGenerator(config: RemoteSettings): CatalogGenerator {
  return {
    backend: 'remote',
    version: () => `remote:${config.model}`,
    generate: (references, options, context) => generateRemote(config, references, options, context),
    close: async () => {},
  }
}

async function generateRemote(
  config: RemoteSettings,
  references: CatalogReference[],
  options: CatalogOptions,
  { onStage }: GenerateContext,
): Promise<CatalogResult> {
  const timings: Record<string, number> = {}
  let started = performance.now()
  const form = new FormData()
  const request: RemoteRequest = {
    protocol: REMOTE_PROTOCOL_VERSION,
    prompt: options.prompt,
    steps: options.steps,
    seed: options.seed,
    width: options.width,
    height: options.height,
    background: options.background,
    shadow: options.shadow,
    layout: options.layout,
    references: references.length,
  }
  form.append('request', new Blob([JSON.stringify(request)], { type: 'application/json' }))
  for (const reference of references) {
    const png = await remotePng(await decodeReference(reference))
    form.append(reference.name, new Blob([png], { type: 'image/png' }), `${reference.name}.png`)
  }
  timings.prepare = performance.now() - started

  onStage('rendering')
  started = performance.now()
  const res = await postRemote('catalog', config, form, 'image/png')
  if (res.status !== 200) throw refusalError('catalog', res.status, await readRefusal(res))
  let png: Uint8Array
  try {
    png = await readCapped(res, MAX_ANSWER_BYTES)
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError'
    const why = timedOut
      ? `did not finish its answer within ${config.timeoutMs} ms`
      : `broke off its answer (${(err as Error).message})`
    throw new InferenceError(timedOut ? 'processor_unavailable' : 'processing_failed', `The catalog backend ${why}`, {
      cause: err,
    })
  }
  await checkRemotePng('catalog', png, options.width, options.height, 'bytes that are')
  timings.generate = performance.now() - started
  for (const step of Object.keys(timings)) timings[step] = Math.round(timings[step] * 10) / 10
  return { png, width: options.width, height: options.height, warnings: [], timings }
}
