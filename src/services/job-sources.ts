/**
 * @module
 * Where a job's image comes from (SPEC.md §2 Source): a completed upload, a multipart file, or a
 * URL fetched through the SSRF guard. Removals have one source; a try-on has two (`person`,
 * `garment`), so every error names the field it came from.
 */
import type { Env } from '../env'
import { ApiError } from '../errors'
import { fromBase64Url, sha256Hex, toHex } from '../lib/crypto'
import { MAX_IMAGE_BYTES } from '../lib/image-sniff'
import { loadConfig } from '../config'
import { readStreamedForm, type StreamedFormSpec } from '../lib/multipart-stream'
import { StagedPart, storeBytes, type StoredSource } from './sources'
import {
  allowlistFromEnv,
  DohResolver,
  fetchSourceBytes,
  formatSeconds,
  SourceFetchError,
  SourceTimeoutError,
  SourceTooLargeError,
  UnsafeUrlError,
} from './ssrf'
import { readyUploads, type UploadRef } from './uploads'

export type SourceInput =
  | { kind: 'upload'; uploadId: string }
  | { kind: 'url'; sourceUrl: string }
  | { kind: 'file'; stored: StoredSource }

/** Where a job keeps the sources it stored itself: `sources/<id>`, or `sources/<id>/<name>` for several. */
export const jobSourcePrefix = (jobId: string) => `sources/${jobId}`

/** The field names errors point at: the JSON members, and the multipart part. */
export interface SourceFields {
  uploadId: string
  sourceUrl: string
  file: string
}

/**
 * One image a job-creating request names (SPEC.md §2 Source): the JSON member that holds its
 * `{sourceUrl | uploadId}` (none: the body's own members), and the multipart file part carrying it.
 */
export interface SourceSlot {
  member?: string
  part: string
}

/** A request's images by name (`{ source }` for a removal, `{ person, garment }` for a try-on). */
export type SourceSlots<S extends string = string> = Record<S, SourceSlot>

/** The names a slot's errors point at. */
function slotFields({ member, part }: SourceSlot): SourceFields {
  const at = member ? `${member}.` : ''
  return { uploadId: `${at}uploadId`, sourceUrl: `${at}sourceUrl`, file: part }
}

/** Where the job stores a slot's bytes (`jobSourcePrefix`): the prefix itself for one image, `<prefix>/<name>` of several. */
function slotKey(jobId: string, slots: SourceSlots, name: string): string {
  return Object.keys(slots).length === 1 ? jobSourcePrefix(jobId) : `${jobSourcePrefix(jobId)}/${name}`
}

export const slotNames = <S extends string>(slots: SourceSlots<S>) => Object.keys(slots) as S[]

/** Each slot's source from a JSON body its schema validated. */
export function sourcesFromJson<S extends string>(
  body: Record<string, unknown>,
  slots: SourceSlots<S>,
): Record<S, SourceInput> {
  const sources = {} as Record<S, SourceInput>
  for (const name of slotNames(slots)) {
    const { member } = slots[name]
    sources[name] = sourceFromJson((member ? body[member] : body) as JsonSource, slotFields(slots[name]))
  }
  return sources
}

/**
 * A job's multipart body read as a stream (`readStagedForm`), each slot's file stored at its key
 * as it arrives: its text parts, and each slot's source. The sources are given by a function that
 * throws a file's refusal (415, 413, a missing part), so the caller checks the text parts first: a
 * bad `options` part is the error named, whatever order the parts came in.
 */
export async function sourcesFromForm<S extends string>(
  request: Request,
  bucket: R2Bucket,
  parts: Omit<StreamedFormSpec, 'openFile'>,
  jobId: string,
  slots: SourceSlots<S>,
): Promise<{ texts: Record<string, string>; sources: () => Record<S, SourceInput> }> {
  const nameOf = (part: string) => slotNames(slots).find((name) => slots[name].part === part) ?? part
  const { texts, staged } = await readStagedForm(request, bucket, parts, (part) => slotKey(jobId, slots, nameOf(part)))
  const sources = () => {
    const found = {} as Record<S, SourceInput>
    for (const name of slotNames(slots)) found[name] = sourceFromPart(staged[slots[name].part], slots[name].part)
    return found
  }
  return { texts, sources }
}

/** Stores (or finds) each slot's source, in the order the slots are named (`resolveSource`). */
export async function resolveSources<S extends string>(
  env: Env,
  workspaceId: string,
  jobId: string,
  slots: SourceSlots<S>,
  input: NoInfer<Record<S, SourceInput>>,
): Promise<Record<S, StoredSource>> {
  const stored = {} as Record<S, StoredSource>
  for (const name of slotNames(slots)) {
    stored[name] = await resolveSource(
      env,
      workspaceId,
      slotKey(jobId, slots, name),
      input[name],
      slotFields(slots[name]),
    )
  }
  return stored
}

/** Whether a request's sources put bytes under the job's prefix (a file part, a fetched URL); an upload's are its own. */
export function storesBytes(input: object): boolean {
  return Object.values(input).some((value) => isSourceInput(value) && value.kind !== 'upload')
}

function isSourceInput(value: unknown): value is SourceInput {
  if (typeof value !== 'object' || value === null || !('kind' in value)) return false
  const { kind } = value
  return (
    (kind === 'upload' && 'uploadId' in value) ||
    (kind === 'url' && 'sourceUrl' in value) ||
    (kind === 'file' && 'stored' in value)
  )
}

/** The uploads a request's slots name, for the insert to check still there (`uploadsStillReady`). */
export function slotUploads<S extends string>(
  slots: SourceSlots<S>,
  input: NoInfer<Record<S, SourceInput>>,
): UploadRef[] {
  return slotNames(slots).flatMap((name) => uploadRefs(input[name], slotFields(slots[name])))
}

/** What makes two requests for these slots the same for idempotency (`requestHash` of each slot's source). */
export function slotsHash<S extends string>(
  slots: SourceSlots<S>,
  input: NoInfer<Record<S, SourceInput>> & { options: unknown },
): Promise<string> {
  const sources = Object.fromEntries(slotNames(slots).map((name) => [name, input[name]]))
  return requestHash(sources, input.options)
}

type JsonSource = { sourceUrl?: string; uploadId?: string }

/** `{sourceUrl | uploadId}` (exactly one) from a JSON body. */
function sourceFromJson(
  body: { sourceUrl?: string; uploadId?: string },
  fields: Pick<SourceFields, 'uploadId' | 'sourceUrl'>,
): SourceInput {
  const { sourceUrl, uploadId } = body
  if ((sourceUrl === undefined) === (uploadId === undefined)) {
    throw new ApiError('invalid_input', 'Expected exactly one of sourceUrl or uploadId', {
      field: sourceUrl === undefined ? fields.sourceUrl : fields.uploadId,
    })
  }
  return sourceUrl !== undefined ? { kind: 'url', sourceUrl } : { kind: 'upload', uploadId: uploadId! }
}

/**
 * A job's multipart body read as a stream (`readStreamedForm`), each file part stored into R2 as
 * it arrives (`StagedPart`, one per name) at `keyOf(name)`, under the job's own prefix.
 */
async function readStagedForm(
  request: Request,
  bucket: R2Bucket,
  parts: Omit<StreamedFormSpec, 'openFile'>,
  keyOf: (name: string) => string,
): Promise<{ texts: Record<string, string>; staged: Record<string, StagedPart> }> {
  const staged: Record<string, StagedPart> = {}
  const openFile = (name: string) => {
    staged[name] = new StagedPart(bucket, keyOf(name), name)
    return staged[name]
  }
  const { texts } = await readStreamedForm(request, { ...parts, openFile })
  return { texts, staged }
}

/**
 * A multipart file part, already streamed into R2 while the body was read (`StagedPart`): missing
 * is 400; one that is plainly not a supported image is refused now, after the other parts.
 */
function sourceFromPart(part: StagedPart | undefined, field: string): SourceInput {
  if (!part) throw new ApiError('invalid_input', `Expected ${field} as a file part`, { field })
  if (part.refusal) throw part.refusal
  if (!part.stored) throw new Error(`Expected ${field} to be stored once its part ended`)
  return { kind: 'file', stored: part.stored }
}

/** The upload a source names (none for a file or a URL), with the field that names it. */
function uploadRefs(input: SourceInput, fields: Pick<SourceFields, 'uploadId'>): UploadRef[] {
  return input.kind === 'upload' ? [{ id: input.uploadId, field: fields.uploadId }] : []
}

/** What a job's runner reads of a stored source: where it is, its size and its hash. */
export const sourceRef = ({ key, size, sha256 }: StoredSource) => ({ key, size, sha256 })

/**
 * What makes two requests the same for idempotency: each named source's fingerprint, then the
 * options (`{ source, options }` for a removal, `{ person, garment, options }` for a try-on).
 */
async function requestHash(sources: Record<string, SourceInput>, options: unknown): Promise<string> {
  const named: Record<string, unknown> = {}
  for (const [name, source] of Object.entries(sources)) named[name] = await sourceFingerprint(source)
  return sha256Hex(JSON.stringify({ ...named, options }))
}

/** What identifies a source for idempotency: a file by its bytes, the others by their reference. */
async function sourceFingerprint(input: SourceInput): Promise<string> {
  switch (input.kind) {
    case 'file':
      // Hex, as when the bytes were hashed here: a retry across the change still replays.
      return `file:${toHex(fromBase64Url(input.stored.sha256))}`
    case 'url':
      return `url:${input.sourceUrl}`
    case 'upload':
      return `upload:${input.uploadId}`
  }
}

/** Stores (or finds) the source's bytes, checked like an upload, under `key` when they are new. */
export async function resolveSource(
  env: Env,
  workspaceId: string,
  key: string,
  input: SourceInput,
  fields: SourceFields,
): Promise<StoredSource> {
  switch (input.kind) {
    case 'upload': {
      const [upload] = await readyUploads(env.DB, workspaceId, [{ id: input.uploadId, field: fields.uploadId }])
      return { key: upload.object_key, size: upload.byte_size, sha256: upload.sha256, mimeType: upload.mime_type ?? '' }
    }
    case 'file':
      // Streamed under the job's own prefix before the accept (`acceptStaged`).
      if (input.stored.key !== key) throw new Error(`Expected ${fields.file} stored at ${key}`)
      return input.stored
    case 'url':
      return storeBytes(env.BUCKET, key, await fetchSource(env, input.sourceUrl, fields.sourceUrl), fields.sourceUrl)
  }
}

/**
 * The bytes behind a `sourceUrl`, as a problem naming `field` when they cannot be had. Problems
 * carry our own words only: an exception's text (the runtime's, a resolver's) stays in its cause.
 */
async function fetchSource(env: Env, url: string, field: string): Promise<Uint8Array> {
  try {
    return await fetchSourceBytes(url, {
      resolver: new DohResolver({ url: env.DNS_RESOLVER_URL }),
      allowlist: allowlistFromEnv(env),
      maxBytes: MAX_IMAGE_BYTES,
      timeoutMs: loadConfig(env).sourceFetchTimeoutMs,
    })
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new ApiError('unsafe_url', `The source URL is not allowed: ${err.reason}`, { field })
    }
    if (err instanceof SourceTimeoutError) {
      throw new ApiError('invalid_input', `${field} did not answer within ${formatSeconds(err.timeoutMs)}`, {
        field,
        cause: err,
      })
    }
    if (err instanceof SourceTooLargeError) throw new ApiError('image_too_large', err.message, { field })
    if (err instanceof SourceFetchError) throw new ApiError('invalid_input', err.message, { field, cause: err })
    if (err instanceof ApiError) throw err
    throw new ApiError('invalid_input', `${field} could not be fetched`, { field, cause: err })
  }
}
