/**
 * The remote try-on backend (`TRYON_BACKEND=remote`): a client of a GPU try-on server (a
 * diffusion model, typically) speaking the protocol of docs/try-on.md. One multipart POST carries
 * a `request` JSON part (protocol, category, seed, the result's width and height) and the two
 * photos as PNGs (decoded and upright here, at most 2048 px a side). The answer is multipart:
 * `result` (a PNG of exactly width×height), optionally `landmarks` (JSON) and `warnings` (JSON).
 * Its failures map to the inference server's error codes as the catalog backend's do (remote-backend.ts).
 */
import type { Notice } from '../../../src/contract/frames.js'
import type { TryOnCategory, TryOnLandmarks, TryOnRequest } from '../../../src/contract/tryon.js'
import { TRYON_WARNINGS } from '../../../src/contract/tryon.js'
import { decodeReference } from '../catalog/references.js'
import { InferenceError } from '../errors.js'
import type { RemoteSettings } from '../remote-config.js'
import {
  checkRemotePng,
  MAX_ANSWER_BYTES,
  postRemote,
  readRefusal,
  refusalError,
  remotePng,
} from '../remote-backend.js'
import { EXPERIMENTAL_NOTICE, type TryOnContext, type TryOnInput, type TryOnModel, type TryOnResult } from './model.js'

export const TRYON_PROTOCOL_VERSION = 1

/** The JSON `request` part. */
export interface RemoteTryOnRequest {
  protocol: typeof TRYON_PROTOCOL_VERSION
  category: TryOnCategory
  seed: number
  /** The result's size: the person photo's, after EXIF orientation. */
  width: number
  height: number
}

/**
 * A backend's refusal as ours. A 422 whose JSON `code` is `pose_not_detected` is the person
 * image's fault, like the CPU model's; the rest keep the catalog backend's mapping.
 */
async function remoteError(res: Response): Promise<InferenceError> {
  const refusal = await readRefusal(res)
  if (refusal.code === TRYON_WARNINGS.noPose) {
    return new InferenceError('invalid_input', `person: no person was found in the person image (${refusal.detail})`)
  }
  return refusalError('try-on', res.status, refusal)
}

/** Reads the multipart answer and checks it: a PNG of exactly width×height, JSON where JSON belongs. */
async function readAnswer(res: Response, width: number, height: number) {
  const length = Number(res.headers.get('content-length') ?? 0)
  if (length > MAX_ANSWER_BYTES)
    throw new InferenceError('processing_failed', `The try-on backend's answer is over ${MAX_ANSWER_BYTES} bytes`)
  let form: FormData
  try {
    form = await res.formData()
  } catch (err) {
    throw new InferenceError(
      'processing_failed',
      `The try-on backend's answer is not multipart: ${(err as Error).message}`,
      { cause: err },
    )
  }
  const result = form.get('result')
  if (!(result instanceof Blob))
    throw new InferenceError('processing_failed', 'The try-on backend answered no result part')
  const png = new Uint8Array(await result.arrayBuffer())
  await checkRemotePng('try-on', png, width, height, 'a result that is')
  const json = async <T>(name: string): Promise<T | undefined> => {
    const part = form.get(name)
    if (part === null) return undefined
    try {
      return JSON.parse(typeof part === 'string' ? part : await part.text()) as T
    } catch {
      throw new InferenceError('processing_failed', `The try-on backend's ${name} part is not JSON`)
    }
  }
  return { png, landmarks: await json<TryOnLandmarks>('landmarks'), warnings: await json<Notice[]>('warnings') }
}

/**
 * @example createRemoteTryOn({ url: 'http://gpu-1:8000/v1/try-on', timeoutMs: 120_000, model: 'idm-vton' })
 */
export function createRemoteTryOn(config: RemoteSettings): TryOnModel {
  return {
    backend: 'remote',
    version: () => `remote:${config.model}`,
    ready: async () => {},
    tryOn: (input, options, context) => tryOnRemote(config, input, options, context),
    close: async () => {},
  }
}

async function tryOnRemote(
  config: RemoteSettings,
  input: TryOnInput,
  options: TryOnRequest,
  { onStage }: TryOnContext,
): Promise<TryOnResult> {
  let started = performance.now()
  const person = await decodeReference({ name: 'person', bytes: input.person })
  const garment = await decodeReference({ name: 'garment', bytes: input.garment })
  const { width, height } = person
  const request: RemoteTryOnRequest = {
    protocol: TRYON_PROTOCOL_VERSION,
    category: options.category,
    seed: options.seed,
    width,
    height,
  }
  const form = new FormData()
  form.append('request', new Blob([JSON.stringify(request)], { type: 'application/json' }))
  form.append('person', new Blob([await remotePng(person)], { type: 'image/png' }), 'person.png')
  form.append('garment', new Blob([await remotePng(garment)], { type: 'image/png' }), 'garment.png')
  const timings: Record<string, number> = { prepare: performance.now() - started }

  onStage('rendering')
  started = performance.now()
  const res = await postRemote('try-on', config, form, 'multipart/form-data')
  if (res.status !== 200) throw await remoteError(res)
  const answer = await readAnswer(res, width, height)
  timings.generate = performance.now() - started
  for (const step of Object.keys(timings)) timings[step] = Math.round(timings[step] * 10) / 10
  const extra = (answer.warnings ?? []).filter(
    (w): w is Notice =>
      typeof w?.code === 'string' && typeof w.message === 'string' && w.code !== TRYON_WARNINGS.experimental,
  )
  return {
    png: answer.png,
    width,
    height,
    landmarks: answer.landmarks ?? { width, height, points: {}, region: [0, 0, width, height] },
    warnings: [EXPERIMENTAL_NOTICE, ...extra],
    timings,
  }
}
